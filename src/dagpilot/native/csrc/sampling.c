/* When the metrics scrapes come (sim/sampling.py): the ticks of a grid k x sample_interval_s,
 * and, through a quiet stretch, a jump to the last tick before the next arrival. */
#include <math.h>

#include "sim.h"

/* The largest k >= 0 with k x interval_s < time_s (0 when there is none). */
static int64_t last_tick_before(double time_s, double interval_s) {
    double quotient = ceil(time_s / interval_s) - 1.0;
    int64_t k = quotient > 0.0 ? (int64_t)quotient : 0;
    while ((double)(k + 1) * interval_s < time_s) k++;  /* the division's rounding, corrected */
    while (k > 0 && (double)k * interval_s >= time_s) k--;
    return k;
}

int64_t next_tick(int64_t index, double interval_s, double quiet_until_s) {
    int64_t following = index + 1;
    if (isinf(quiet_until_s)) return following;
    int64_t last = last_tick_before(quiet_until_s, interval_s);
    return last > following ? last : following;
}
