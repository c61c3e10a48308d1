/*
 * th_kcase.h - kernel test cases: the binary record format shared by the host driver
 * (tests/kernels/driver/host_main.c, built with ASan/UBSan) and the target test firmware
 * (tests/kernels/firmware/), and the function that runs one case.
 *
 * All fields little-endian 32-bit words.
 *   case   := 'THKC' total_bytes case_id op n_ints ints[n_ints] n_blobs blob*
 *   blob   := n_bytes bytes (padded with zeros to a multiple of 4)
 *   result := 'THKR' total_bytes case_id status n_bytes bytes (padded)
 * total_bytes counts the whole record. The ops, their ints and blobs are listed in
 * tests/kernels/cases.py (the Python side is the documentation of each layout).
 */
#ifndef TH_KCASE_H
#define TH_KCASE_H

#include <stddef.h>
#include <stdint.h>

#define TH_KCASE_MAGIC 0x434B4854u   /* "THKC" */
#define TH_KRESULT_MAGIC 0x524B4854u /* "THKR" */

/* Status values beyond th_status, set by the driver itself. */
#define TH_KCASE_BAD_RECORD 100 /* malformed case record */
#define TH_KCASE_NO_MEMORY 101  /* the case does not fit the driver's buffers */
#define TH_KCASE_GUARD 102      /* a kernel wrote outside its output or scratch */
#define TH_KCASE_BAD_OP 103     /* unknown op code */
#define TH_KCASE_PREP_MISMATCH 104 /* the host's prepared struct differs from the C one */

/* Memory for one case's buffers. The host driver uses malloc (exact sizes, so ASan sees
 * any overflow); the firmware uses a static arena with guard bytes after each buffer. */
typedef struct {
    void *(*alloc)(void *self, size_t size);
    void (*release_all)(void *self);
    int (*guards_intact)(void *self);
    void *self;
} th_kalloc;

/* Runs one case record. Writes the result record into out (capacity out_cap) and returns
 * its length, or 0 if out is too small. */
size_t th_kcase_run(const uint8_t *record, size_t record_len, const th_kalloc *mem,
                    uint8_t *out, size_t out_cap);

/* Optional hooks around the kernel call (the firmware's instruction-count markers). */
void th_kcase_before_kernel(void);
void th_kcase_after_kernel(void);

#endif /* TH_KCASE_H */
