/* numpy's Generator.integers(n), one draw, in C over the generator's own bit generator, so that
 * the scheduler's tie-breaks take the same bits as the Python scheduler's (Lemire's bounded
 * method on 32-bit draws, as numpy's random_bounded_uint64_fill does for ranges < 2^32). */
#ifndef DAGPILOT_DRAW_H
#define DAGPILOT_DRAW_H

#include <Python.h>
#include <stdint.h>

/* numpy/random/bitgen.h's bitgen_t, whose layout numpy documents for C extensions. */
typedef struct {
    void *state;
    uint64_t (*next_uint64)(void *state);
    uint32_t (*next_uint32)(void *state);
    double (*next_double)(void *state);
    uint64_t (*next_raw)(void *state);
} BitGen;

/* The bit generator of a numpy Generator (its `bit_generator.capsule`), with a new reference
 * to the bit generator in *owner that keeps the struct alive: release it after the last draw.
 * NULL (and *owner NULL) with a Python exception set. */
BitGen *bitgen_of(PyObject *generator, PyObject **owner);

/* A uniform integer in [0, n), n <= 2^32, taking the bits Generator.integers(n) takes; 0,
 * drawing nothing, for n <= 1. */
int64_t draw_below(BitGen *bitgen, int64_t n);

#endif
