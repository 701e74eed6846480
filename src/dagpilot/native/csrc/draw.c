/* See draw.h. */
#include "draw.h"

BitGen *bitgen_of(PyObject *generator) {
    PyObject *bit_generator = PyObject_GetAttrString(generator, "bit_generator");
    if (bit_generator == NULL) return NULL;
    PyObject *capsule = PyObject_GetAttrString(bit_generator, "capsule");
    Py_DECREF(bit_generator);  /* the Generator keeps it alive */
    if (capsule == NULL) return NULL;
    BitGen *bitgen = PyCapsule_GetPointer(capsule, "BitGenerator");
    Py_DECREF(capsule);  /* the bit generator keeps the struct alive */
    return bitgen;
}

int64_t draw_below(BitGen *bitgen, int64_t n) {
    uint32_t range = (uint32_t)(n - 1);  /* numpy's closed range [0, n - 1] */
    if (range == 0) return 0;            /* numpy draws nothing for a single value */
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
