/* When a bound pod starts running: its start-up delay (image pull, container start; median x
 * exp(sigma x N(0, 1)), normals from the run's start-up stream in blocks) taken on one of its
 * node's start-up slots (sim/startup.py, sim/engine.py StartupDelays). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim.h"

/* Room for `size` normals in sim->normal_block; 0 with MemoryError set. */
static int reserve_normals(Sim *sim, Py_ssize_t size) {
    if (size <= sim->normal_capacity) return 1;
    double *grown = realloc(sim->normal_block, sizeof(double) * (size_t)size);
    if (grown == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    sim->normal_block = grown;
    sim->normal_capacity = size;
    return 1;
}

/* The list's numbers into sim->normal_block (as many as fit); how many, or -1 with an exception
 * set. Each item is held while it converts: its __float__ could change the list. */
static Py_ssize_t copy_normals(Sim *sim, PyObject *block) {
    Py_ssize_t count = 0;
    for (; count < PyList_GET_SIZE(block) && count < sim->normal_capacity; count++) {
        PyObject *item = PyList_GET_ITEM(block, count);
        Py_INCREF(item);
        double value = PyFloat_AsDouble(item);
        int failed = value == -1.0 && PyErr_Occurred();
        if (failed && PyErr_ExceptionMatches(PyExc_TypeError))  /* not a number: say which */
            PyErr_Format(PyExc_TypeError, "native run: normals() must return a list of floats; "
                         "item %zd is a %s", count, Py_TYPE(item)->tp_name);
        Py_DECREF(item);
        if (!failed && !isfinite(value)) {  /* a start-up delay must be a time */
            char shown[32];
            snprintf(shown, sizeof(shown), "%g", value);
            PyErr_Format(PyExc_ValueError, "native run: normals() must return finite floats; "
                         "item %zd is %s", count, shown);
            failed = 1;
        }
        if (failed) return -1;
        sim->normal_block[count] = value;
    }
    return count;
}

/* The next block of normals() as doubles (the list itself may change later); 0 with sim->error
 * set when normals() raised or gave no list of numbers. */
static int next_block(Sim *sim) {
    PyObject *block = PyObject_CallNoArgs(sim->normals);
    Py_ssize_t count = -1;
    if (block != NULL && (!PyList_Check(block) || PyList_GET_SIZE(block) == 0))
        PyErr_Format(PyExc_TypeError, "native run: normals() must return a non-empty list of "
                     "floats, not %s", PyList_Check(block) ? "[]" : Py_TYPE(block)->tp_name);
    else if (block != NULL && reserve_normals(sim, PyList_GET_SIZE(block)))
        count = copy_normals(sim, block);
    if (count == 0)
        PyErr_SetString(PyExc_TypeError, "native run: the list normals() returned emptied");
    Py_XDECREF(block);
    sim->normal_count = count > 0 ? count : 0;
    sim->normal_next = 0;
    if (count <= 0) sim->error = 1;
    return count > 0;
}

/* StartupDelays.draw: median x exp(sigma x N(0, 1)), normals taken in blocks. */
static double startup_delay(Sim *sim) {
    if (sim->p.startup_median_s <= 0.0) return 0.0;
    if (sim->p.startup_sigma <= 0.0) return sim->p.startup_median_s;
    if (sim->error) return 0.0;  /* no Python call with an exception set */
    if (sim->normal_next >= sim->normal_count && !next_block(sim)) return 0.0;
    double normal = sim->normal_block[sim->normal_next++];
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
