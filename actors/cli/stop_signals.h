#ifndef ACTEX_ACTORS_CLI_STOP_SIGNALS_H_
#define ACTEX_ACTORS_CLI_STOP_SIGNALS_H_

#include "actors/node_supervisor.h"

namespace actex {

// Makes SIGTERM, SIGINT and SIGHUP (cloud preemption, Slurm's --signal, Ctrl-C, a
// closed terminal or ssh session; SIGHUP not where the process started with it
// ignored, as under nohup) count into the returned StopSignals instead of ending the
// process, so a node can drain and say what it kept. The counter is process-wide (a signal handler can reach nothing
// else); the handlers stay for the life of the process. Calls after the first
// return the same counter.
const StopSignals& CountStopSignals();

}  // namespace actex

#endif  // ACTEX_ACTORS_CLI_STOP_SIGNALS_H_
