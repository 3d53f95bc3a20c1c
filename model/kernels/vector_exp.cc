#include "model/kernels/vector_exp.h"

namespace actex {

__m256 Exp8(__m256 x) {
  const __m256 upper = _mm256_set1_ps(88.3762626647949f);
  const __m256 lower = _mm256_set1_ps(-87.3365447505531f);  // ln(FLT_MIN)
  // min/max return their second operand when either is NaN, so NaN passes through.
  __m256 clamped = _mm256_min_ps(upper, x);
  clamped = _mm256_max_ps(lower, clamped);

  // x = n ln2 + r with |r| <= ln2/2; ln2 split in two so n ln2 is exact enough.
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), clamped);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);

  // e^r by the Cephes single-precision polynomial: 1 + r + r² P(r).
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 r2 = _mm256_mul_ps(r, r);
  p = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));

  // Scale by 2^n, built directly in the exponent field (n is in [-126, 127]).
  const __m256i exponent =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 result = _mm256_mul_ps(p, _mm256_castsi256_ps(exponent));

  result = _mm256_blendv_ps(result, _mm256_setzero_ps(), _mm256_cmp_ps(x, lower, _CMP_LT_OQ));
  result = _mm256_blendv_ps(result, _mm256_set1_ps(__builtin_inff()),
                            _mm256_cmp_ps(x, upper, _CMP_GT_OQ));
  return result;
}

ACTEX_TARGET_AVX512 __m512 Exp16(__m512 x) {
  const __m512 upper = _mm512_set1_ps(88.3762626647949f);
  const __m512 lower = _mm512_set1_ps(-87.3365447505531f);
  __m512 clamped = _mm512_min_ps(upper, x);
  clamped = _mm512_max_ps(lower, clamped);

  const __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(1.44269504088896341f)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), clamped);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);

  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 r2 = _mm512_mul_ps(r, r);
  p = _mm512_fmadd_ps(p, r2, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));

  const __m512i exponent =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  __m512 result = _mm512_mul_ps(p, _mm512_castsi512_ps(exponent));

  result =
      _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, lower, _CMP_LT_OQ), result, _mm512_setzero_ps());
  result = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, upper, _CMP_GT_OQ), result,
                                _mm512_set1_ps(__builtin_inff()));
  return result;
}

}  // namespace actex
