/* See draw.h. */
#include "draw.h"

BitGen *bitgen_of(PyObject *generator, PyObject **owner) {
    *owner = NULL;
    PyObject *bit_generator = PyObject_GetAttrString(generator, "bit_generator");
    if (bit_generator == NULL) return NULL;
    PyObject *capsule = PyObject_GetAttrString(bit_generator, "capsule");
    BitGen *bitgen = capsule == NULL ? NULL : PyCapsule_GetPointer(capsule, "BitGenerator");
    Py_XDECREF(capsule);  /* the bit generator holds its capsule, and the struct it points to */
    if (bitgen == NULL || bitgen->next_uint32 == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "the generator's bit generator has no next_uint32");
        Py_DECREF(bit_generator);
        return NULL;
    }
    /* Held until the last draw: the generator need not keep it (a bit_generator made afresh on
     * each access would otherwise be freed here, and its struct read after that). */
    *owner = bit_generator;
    return bitgen;
}

int64_t draw_below(BitGen *bitgen, int64_t n) {
    if (n <= 1) return 0;                /* numpy draws nothing for a single value */
    uint32_t range = (uint32_t)(n - 1);  /* numpy's closed range [0, n - 1] */
    if (range == UINT32_MAX) return bitgen->next_uint32(bitgen->state);
    uint32_t exclusive = range + 1;
    uint64_t scaled = (uint64_t)bitgen->next_uint32(bitgen->state) * exclusive;
    uint32_t leftover = (uint32_t)scaled;
    if (leftover < exclusive) {  /* reject the biased low end */
        uint32_t threshold = (UINT32_MAX - range) % exclusive;
        while (leftover < threshold) {
            scaled = (uint64_t)bitgen->next_uint32(bitgen->state) * exclusive;
            leftover = (uint32_t)scaled;
        }
    }
    return (int64_t)(scaled >> 32);
}
