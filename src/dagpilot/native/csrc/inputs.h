/* Reading a run's inputs from Python (inputs.c). */
#ifndef DAGPILOT_INPUTS_H
#define DAGPILOT_INPUTS_H

#include "sim.h"

/* The settings, switches and physics parameters of pack.params; 0 with an exception set. */
int read_params(PyObject *params, Params *p);

/* A number of a dict of floats (pack.params, the counts of pack.tables) as an int32. */
int read_int(PyObject *params, const char *name, int32_t *out);

/* The tables of pack.tables into the Sim's specs; 0 with an exception set. */
int read_inputs(Sim *sim, PyObject *tables);

#endif
