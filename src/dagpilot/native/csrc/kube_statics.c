/* Reading the statics dict that native/kube_statics.py builds: each array checked for its kind
 * and shape and copied, every index checked against its range, every float against its rule
 * (checks.h): whole capacities and requests, so that every score and total is a number. */
#include "kube_internal.h"

#include <stdlib.h>
#include <string.h>

#include "checks.h"

/* Whether a buffer format names the element kind ('d', 'B', 'i', 'q') for this platform. */
static int format_is(const char *format, char kind)
{
    if (format == NULL)
        return kind == 'B';
    if (*format == '@' || *format == '=' || *format == '<')
        format++;
    if (format[0] == '\0' || format[1] != '\0')
        return 0;
    if (kind == 'B')
        return format[0] == 'B' || format[0] == '?';
    if (kind == 'q')
        return format[0] == 'q' || (format[0] == 'l' && sizeof(long) == 8);
    if (kind == 'i')
        return format[0] == 'i' || (format[0] == 'l' && sizeof(long) == 4);
    return format[0] == kind;
}

/* A copy of statics[key], checked for its kind and shape; dims[i] < 0 is read from the array. */
static void *read_array(PyObject *statics, const char *key, char kind, Py_ssize_t itemsize,
                        int ndim, Py_ssize_t *dims)
{
    PyObject *value = PyDict_GetItemString(statics, key);
    if (value == NULL) {
        PyErr_Format(PyExc_KeyError, "kube statics: missing %s", key);
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(value, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    void *copy = NULL;
    int good = view.itemsize == itemsize && format_is(view.format, kind) && view.ndim == ndim;
    for (int i = 0; good && i < ndim; i++) {
        if (dims[i] < 0)
            dims[i] = view.shape[i];
        good = view.shape[i] == dims[i];
    }
    if (!good)
        PyErr_Format(PyExc_ValueError, "kube statics: %s has the wrong kind or shape", key);
    else if ((copy = malloc(view.len > 0 ? (size_t)view.len : 1)) == NULL)
        PyErr_NoMemory();
    else
        memcpy(copy, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return copy;
}

/* Every class, constraint and task index in range. */
static int check_indices(const Kube *k)
{
    for (int32_t c = 0; c < k->class_count; c++)
        if (k->s.constraint[c] < 0 || k->s.constraint[c] >= k->constraint_count) {
            PyErr_Format(PyExc_ValueError, "kube statics: constraint row %d: %d is not below "
                         "the %d constraints of static_mask", c, k->s.constraint[c],
                         k->constraint_count);
            return -1;
        }
    for (int32_t t = 0; t < k->task_count; t++)
        if (k->tasks[t].klass < 0 || k->tasks[t].klass >= k->class_count) {
            PyErr_Format(PyExc_ValueError, "native run: tasks.klass row %d: %d is not below the "
                         "%d classes of the kube statics", t, k->tasks[t].klass,
                         k->class_count);
            return -1;
        }
    return 0;
}

/* The two one-element arrays. */
static int read_scalars(Kube *k, PyObject *statics)
{
    Py_ssize_t one[1] = {1};
    int32_t *limit = read_array(statics, "nodes_to_find", 'i', 4, 1, one);
    uint8_t *positive = limit ? read_array(statics, "capacity_positive", 'B', 1, 1, one) : NULL;
    if (positive == NULL) {
        free(limit);
        return -1;
    }
    k->s.limit = *limit;
    k->s.capacity_positive = *positive;
    free(limit);
    free(positive);
    if (k->s.limit < 1 && k->node_count > 0) {
        PyErr_SetString(PyExc_ValueError, "kube statics: nodes_to_find must be positive");
        return -1;
    }
    return 0;
}

/* The arrays by node, task and class; the number of classes is that of `constraint`. */
static int read_class_arrays(Kube *k, PyObject *statics)
{
    Statics *s = &k->s;
    Py_ssize_t d_n2[2] = {k->node_count, 2}, d_t[1] = {k->task_count}, d_c[1] = {-1};
    if (!(s->capacity_milli = read_array(statics, "capacity_milli", 'd', 8, 2, d_n2)) ||
        !(s->priority = read_array(statics, "priority", 'q', 8, 1, d_t)) ||
        !(s->constraint = read_array(statics, "constraint", 'i', 4, 1, d_c)))
        return -1;
    Py_ssize_t c = d_c[0], d_c3[2] = {c, 3}, d_c2[2] = {c, 2}, d_cc[1] = {c};
    if (!(s->need = read_array(statics, "need", 'd', 8, 2, d_c3)) ||
        !(s->request_least = read_array(statics, "request_least", 'd', 8, 2, d_c2)) ||
        !(s->request_balanced = read_array(statics, "request_balanced", 'd', 8, 2, d_c2)) ||
        !(s->clip = read_array(statics, "clip", 'B', 1, 1, d_cc)) ||
        !(s->tolerates_not_ready = read_array(statics, "tolerates_not_ready", 'B', 1, 1, d_cc)))
        return -1;
    k->class_count = (int32_t)c;
    return 0;
}

/* The static plugins' arrays, by plugin and constraint; their numbers are those of
 * `static_weight` and `static_mask`. */
static int read_static_plugins(Kube *k, PyObject *statics)
{
    Statics *s = &k->s;
    Py_ssize_t n = k->node_count, d_kn[2] = {-1, n}, d_p[1] = {-1};
    if (!(s->static_mask = read_array(statics, "static_mask", 'B', 1, 2, d_kn)) ||
        !(s->static_weight = read_array(statics, "static_weight", 'd', 8, 1, d_p)))
        return -1;
    Py_ssize_t kc = d_kn[0], p = d_p[0];
    Py_ssize_t d_pkn[3] = {p, kc, n}, d_pk[2] = {p, kc}, d_pp[1] = {p}, d_k[1] = {kc};
    if (!(s->static_raw = read_array(statics, "static_raw", 'd', 8, 3, d_pkn)) ||
        !(s->static_constant = read_array(statics, "static_constant", 'd', 8, 2, d_pk)) ||
        !(s->static_reverse = read_array(statics, "static_reverse", 'B', 1, 1, d_pp)) ||
        !(s->separable_constant = read_array(statics, "separable_constant", 'd', 8, 1, d_k)))
        return -1;
    k->constraint_count = (int32_t)kc;
    k->plugin_count = (int32_t)p;
    return 0;
}

/* capacity_positive says whether every capacity is positive, as ClusterStatics computes it:
 * the scores divide by the capacities only when it is set. */
static int check_capacity_positive(const Kube *k)
{
    int positive = 1;
    for (int32_t i = 0; i < 2 * k->node_count; i++)
        positive &= k->s.capacity_milli[i] > 0.0;
    if (positive == (k->s.capacity_positive != 0))
        return 0;
    PyErr_Format(PyExc_ValueError, "kube statics: capacity_positive is %d, but %s capacity_milli "
                 "is positive", (int)k->s.capacity_positive, positive ? "every" : "not every");
    return -1;
}

/* Every float array's values by its rule; -1 with a ValueError naming the array and row. */
static int check_floats(const Kube *k)
{
    static const NumberRule amount = {0.0, MAX_AMOUNT_F, WHOLE};
    static const NumberRule need = {0.0, MAX_AMOUNT_F, MINUS_INF_OK};
    static const NumberRule raw = {-MAX_AMOUNT_F, MAX_AMOUNT_F, WHOLE};
    static const NumberRule constant = {-MAX_AMOUNT_F, MAX_AMOUNT_F, NAN_MEANS_NONE};
    static const NumberRule weight = {-1048576.0, 1048576.0, 0};
    static const NumberRule separable = {-1e30, 1e30, NAN_MEANS_NONE};
    const Statics *s = &k->s;
    int64_t n = k->node_count, c = k->class_count, kc = k->constraint_count, p = k->plugin_count;
    const char *t = "kube statics";
    return check_numbers(t, "capacity_milli", s->capacity_milli, 8, 2 * n, &amount) &&
           check_numbers(t, "need", s->need, 8, 3 * c, &need) &&
           check_numbers(t, "request_least", s->request_least, 8, 2 * c, &amount) &&
           check_numbers(t, "request_balanced", s->request_balanced, 8, 2 * c, &amount) &&
           check_numbers(t, "static_raw", s->static_raw, 8, p * kc * n, &raw) &&
           check_numbers(t, "static_constant", s->static_constant, 8, p * kc, &constant) &&
           check_numbers(t, "static_weight", s->static_weight, 8, p, &weight) &&
           check_numbers(t, "separable_constant", s->separable_constant, 8, kc, &separable)
        ? check_capacity_positive(k) : -1;
}

/* Every array copied into k->s, and the counts of classes, constraints and plugins set;
 * -1 with a Python exception set on bad input. */
int kube_read_statics(Kube *k, PyObject *statics)
{
    if (read_scalars(k, statics) < 0 || read_class_arrays(k, statics) < 0 ||
        read_static_plugins(k, statics) < 0 || check_floats(k) < 0)
        return -1;
    return check_indices(k);
}

void kube_statics_free(Statics *s)
{
    void *owned[] = {s->capacity_milli, s->priority, s->constraint, s->need, s->request_least,
                     s->request_balanced, s->clip, s->tolerates_not_ready, s->static_mask,
                     s->static_raw, s->static_constant, s->static_weight, s->static_reverse,
                     s->separable_constant};
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
        free(owned[i]);
}
