/* th_nn_resize.h - private: checks of the host-built resize tables (th_resize_tables). */
#ifndef TH_NN_RESIZE_H
#define TH_NN_RESIZE_H

#include <stddef.h>

#include "th_nn.h"
#include "../reshape/th_nn_shape.h"

static inline int th_nn_resize_dims_ok(const th_dims *in, const th_dims *out)
{
    return in != NULL && out != NULL && in->n >= 1 && in->h >= 1 && in->w >= 1 && in->c >= 1 &&
           out->n == in->n && out->h >= 1 && out->w >= 1 && out->c == in->c &&
           (int64_t)in->n * in->h * in->w * in->c < TH_NN_MAX_ELEMENTS &&
           (int64_t)out->n * out->h * out->w * out->c < TH_NN_MAX_ELEMENTS;
}

/* `count` groups of `group` int32: every one of the first min(group, 2) values an index in
 * [0, size); a third value (bilinear weight, 1/1024 units) in [-1024, 2048]. */
static inline int th_nn_resize_table_ok(const int32_t *table, int32_t count, int32_t group,
                                        int32_t size)
{
    if (table == NULL) {
        return 0;
    }
    for (int32_t i = 0; i < count; i++) {
        const int32_t *g = table + (size_t)i * (size_t)group;
        for (int32_t k = 0; k < group && k < 2; k++) {
            if (g[k] < 0 || g[k] >= size) {
                return 0;
            }
        }
        if (group == 3 && (g[2] < -1024 || g[2] > 2048)) {
            return 0;
        }
    }
    return 1;
}

#endif /* TH_NN_RESIZE_H */
