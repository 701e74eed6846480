/* When a bound pod starts running: its start-up delay (image pull, container start; median x
 * exp(sigma x N(0, 1)), normals from the run's start-up stream in blocks) taken on one of its
 * node's start-up slots (sim/startup.py, sim/engine.py StartupDelays). */
#include <math.h>

#include "sim.h"

/* StartupDelays.draw: median x exp(sigma x N(0, 1)), normals taken in blocks. */
static double startup_delay(Sim *sim) {
    if (sim->p.startup_median_s <= 0.0) return 0.0;
    if (sim->p.startup_sigma <= 0.0) return sim->p.startup_median_s;
    if (sim->normal_block == NULL || sim->normal_next == PyList_GET_SIZE(sim->normal_block)) {
        Py_XDECREF(sim->normal_block);
        sim->normal_block = PyObject_CallNoArgs(sim->normals);
        sim->normal_next = 0;
        if (sim->normal_block == NULL || !PyList_Check(sim->normal_block)
                || PyList_GET_SIZE(sim->normal_block) == 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "normals() must return a non-empty list");
            Py_CLEAR(sim->normal_block);
            sim->error = 1;
            return 0.0;
        }
    }
    double normal = PyFloat_AsDouble(PyList_GET_ITEM(sim->normal_block, sim->normal_next++));
    return sim->p.startup_median_s * exp(sim->p.startup_sigma * normal);
}

/* StartupSlots.start_time: when a pod bound to the node now starts; reserves its slot. */
double startup_time(Sim *sim, int32_t n) {
    double delay = startup_delay(sim), now = sim->now_s;
    int32_t slots = sim->p.startup_slots;
    if (slots == 0) return now + delay;
    double *free = &sim->slot_free[(size_t)n * (size_t)slots];
    int32_t slot = 0;
    for (int32_t i = 1; i < slots; i++)
        if (free[i] < free[slot]) slot = i;
    double start = (now >= free[slot] ? now : free[slot]) + delay;
    free[slot] = start;
    return start;
}

void startup_clear(Sim *sim, int32_t n) {
    int32_t slots = sim->p.startup_slots;
    for (int32_t i = 0; i < slots; i++) sim->slot_free[(size_t)n * (size_t)slots + i] = 0.0;
}
