/* Reading a run's inputs from Python (inputs.c) and checking them (input_checks.c). */
#ifndef DAGPILOT_INPUTS_H
#define DAGPILOT_INPUTS_H

#include "sim.h"

/* The settings, switches and physics parameters of pack.params; 0 with an exception set. */
int read_params(PyObject *params, Params *p);

/* dict[name] (pack.params, the counts of pack.tables: floats) as an int32 from `least` up;
 * 0 with an exception set naming `dict_name` and `name`. */
int read_int(PyObject *dict, const char *dict_name, const char *name, int32_t least,
             int32_t *out);

/* The lengths of the `arrays` table's columns, which the other tables index into. */
typedef struct {
    Py_ssize_t children, runtimes, iops, root_complexes, pool_nodes;
} ArrayLengths;

/* Every index of the tables read into the Sim (tasks, nodes, jobs, pools and the arrays of
 * `lengths`) within range (input_checks.c); 0 with a ValueError naming table, column, row. */
int check_references(const Sim *sim, const ArrayLengths *lengths);

/* Every float of the tables read into the Sim a number in its range (checks.h); 0 with a
 * ValueError naming table, column, row. */
int check_figures(const Sim *sim, const ArrayLengths *lengths);

/* Every float setting of pack.params in its range; 0 with a ValueError naming it. */
int check_params(const Params *p);

/* The tables of pack.tables into the Sim's specs, checked; 0 with an exception set. */
int read_inputs(Sim *sim, PyObject *tables);

#endif
