/* The rule every float the core is given must follow (input_checks.c), for the tables and
 * settings (inputs.c) and kube-default's statics (kube_statics.c): a number within its range,
 * never NaN or infinite unless the rule says so, so that every figure the core computes from
 * them is a number too. */
#ifndef DAGPILOT_CHECKS_H
#define DAGPILOT_CHECKS_H

#include <stddef.h>
#include <stdint.h>

/* Ranges shared by the tables and the statics (sim/input_checks.py has the same bounds). */
#define MAX_TIME_S 1e12            /* arrivals, runtimes, durations: some 31,700 years */
#define MAX_AMOUNT_F 9007199254740992.0  /* 2**53: bytes, millicores, scores stay exact */
#define MAX_CORES 1e6
#define MAX_FIGURE 1e290           /* derived rates: any sum of them stays finite */
#define MIN_SAMPLE_INTERVAL_S 0.1  /* core/setting_ranges.py */

enum {
    ABOVE_LOW = 1,      /* low itself is excluded */
    WHOLE = 2,          /* whole numbers only */
    NAN_MEANS_NONE = 4, /* NaN is allowed: the column's "none" */
    MINUS_INF_OK = 8,   /* -inf is allowed (a need not asked) */
};

typedef struct {
    double low, high;   /* high may be +inf: then +inf is allowed */
    unsigned flags;
} NumberRule;

/* Whether value follows the rule. */
int follows(double value, const NumberRule *rule);

/* count values, `stride` bytes apart from `first`, each following the rule; 0 with a
 * ValueError "native run: <table>.<column> row <i>: <value> is not ..." otherwise. */
int check_numbers(const char *table, const char *column, const void *first, size_t stride,
                  int64_t count, const NumberRule *rule);

#endif
