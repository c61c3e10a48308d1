/* th_nn_space_depth.h - private: the one loop of DEPTH_TO_SPACE and SPACE_TO_DEPTH.
 * With the space side (N, H*b, W*b, C) and the depth side (N, H, W, b*b*C), depth pixel
 * (n, h, w) row i (i < b) holds the b*C bytes of space row h*b + i, columns w*b .. w*b+b-1:
 * runs of b*C contiguous bytes on both sides, one copy each (th_nn_copy_run). */
#ifndef TH_NN_SPACE_DEPTH_H
#define TH_NN_SPACE_DEPTH_H

#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

/* to_space != 0: depth -> space (DEPTH_TO_SPACE), else space -> depth. */
static inline th_status th_nn_space_depth(int32_t block, const th_dims *depth,
                                          const th_dims *space, const int8_t *input,
                                          int8_t *output, int to_space)
{
    if (input == NULL || output == NULL || depth == NULL || space == NULL || block < 1 ||
        depth->n < 1 || depth->h < 1 || depth->w < 1 || space->c < 1 ||
        space->n != depth->n || (int64_t)depth->h * block != space->h ||
        (int64_t)depth->w * block != space->w || (int64_t)space->c * block * block != depth->c ||
        (int64_t)depth->n * depth->h * depth->w * depth->c >= TH_NN_MAX_ELEMENTS) {
        return TH_ERR_ARG;
    }
    const size_t run = (size_t)block * (size_t)space->c;
    const size_t space_row = (size_t)space->w * (size_t)space->c;
    const int8_t *src = input;
    int8_t *dst = output;
    for (int32_t n = 0; n < depth->n; n++) {
        for (int32_t h = 0; h < depth->h; h++) {
            /* space rows h*b .. h*b+b-1 of batch n */
            const size_t base =
                ((size_t)n * (size_t)space->h + (size_t)h * (size_t)block) * space_row;
            for (int32_t w = 0; w < depth->w; w++) {
                for (int32_t i = 0; i < block; i++) {
                    const size_t at = base + (size_t)i * space_row + (size_t)w * run;
                    if (to_space) {
                        th_nn_copy_run(output + at, src, run);
                        src += run;
                    } else {
                        th_nn_copy_run(dst, input + at, run);
                        dst += run;
                    }
                }
            }
        }
    }
    return TH_OK;
}

#endif /* TH_NN_SPACE_DEPTH_H */
