/* The run as a whole: start it, drive it with the scheduler to its end, close it. */
#ifndef DAGPILOT_RUN_H
#define DAGPILOT_RUN_H

#include "sim.h"

void sim_start(Sim *sim);
void sim_drive(Sim *sim);
void sim_close(Sim *sim);

#endif
