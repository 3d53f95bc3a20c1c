#include "model/kernels/vector_tanh.h"

#include "model/kernels/vector_exp.h"

namespace actex {
namespace {

// Cephes tanhf's polynomial: tanh(x) = x + x · x² · P(x²) for |x| <= 0.625.
constexpr float kP0 = -5.70498872745e-3f, kP1 = 2.06390887954e-2f, kP2 = -5.37397155531e-2f,
                kP3 = 1.33314422036e-1f, kP4 = -3.33332819422e-1f;
constexpr float kPolynomialLimit = 0.625f;

}  // namespace

__m256 Tanh8(__m256 x) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256 magnitude = _mm256_andnot_ps(sign_bit, x);
  // 1 - 2 / (e^2|x| + 1): e^2|x| is +inf past |x| = 44, which gives exactly 1.
  const __m256 exp_twice = Exp8(_mm256_add_ps(magnitude, magnitude));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 large =
      _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(exp_twice, one)));

  const __m256 square = _mm256_mul_ps(magnitude, magnitude);
  __m256 p = _mm256_set1_ps(kP0);
  p = _mm256_fmadd_ps(p, square, _mm256_set1_ps(kP1));
  p = _mm256_fmadd_ps(p, square, _mm256_set1_ps(kP2));
  p = _mm256_fmadd_ps(p, square, _mm256_set1_ps(kP3));
  p = _mm256_fmadd_ps(p, square, _mm256_set1_ps(kP4));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, square), magnitude, magnitude);

  // NaN compares false, so it takes the polynomial, which keeps it NaN. Both forms
  // are of |x|; x's sign goes on last, so tanh(-0) is -0.
  const __m256 use_large = _mm256_cmp_ps(magnitude, _mm256_set1_ps(kPolynomialLimit), _CMP_GT_OQ);
  return _mm256_or_ps(_mm256_blendv_ps(small, large, use_large), _mm256_and_ps(sign_bit, x));
}

ACTEX_TARGET_AVX512 __m512 Tanh16(__m512 x) {
  const __m512 sign_bit = _mm512_set1_ps(-0.0f);
  const __m512 magnitude = _mm512_andnot_ps(sign_bit, x);
  const __m512 exp_twice = Exp16(_mm512_add_ps(magnitude, magnitude));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 large =
      _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(exp_twice, one)));

  const __m512 square = _mm512_mul_ps(magnitude, magnitude);
  __m512 p = _mm512_set1_ps(kP0);
  p = _mm512_fmadd_ps(p, square, _mm512_set1_ps(kP1));
  p = _mm512_fmadd_ps(p, square, _mm512_set1_ps(kP2));
  p = _mm512_fmadd_ps(p, square, _mm512_set1_ps(kP3));
  p = _mm512_fmadd_ps(p, square, _mm512_set1_ps(kP4));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(p, square), magnitude, magnitude);

  const __mmask16 use_large =
      _mm512_cmp_ps_mask(magnitude, _mm512_set1_ps(kPolynomialLimit), _CMP_GT_OQ);
  return _mm512_or_ps(_mm512_mask_blend_ps(use_large, small, large), _mm512_and_ps(sign_bit, x));
}

}  // namespace actex
