/* th_kcase_movement.h - the data-movement and MAXIMUM / MINIMUM case records (ops 100-112,
 * tests/kernels/cases_movement.py documents each layout), run by th_kcase.c. */
#ifndef TH_KCASE_MOVEMENT_H
#define TH_KCASE_MOVEMENT_H

#include <stdint.h>

#include "th_kcase.h"

/* Runs op on the decoded ints and blobs; returns 0 (and touches nothing) if op is not one of
 * this file's, else 1 with *status and the output (*out, *out_len) set. */
int th_kcase_run_movement(uint32_t op, const int32_t *ints, uint32_t n_ints,
                          const uint8_t *const *blob, const uint32_t *blob_len,
                          uint32_t n_blobs, const th_kalloc *mem, int32_t *status,
                          const int8_t **out, int64_t *out_len);

#endif /* TH_KCASE_MOVEMENT_H */
