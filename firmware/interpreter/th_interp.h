/*
 * th_interp.h - the tinyhost model interpreter: runs a model blob (BLOB_FORMAT.md) with the
 * tinyhost int8 kernels. ARCHITECTURE.md §4.4.
 *
 *   static th_interp ctx;                         // ~1.3 KiB: keep it static
 *   static uint8_t arena[ARENA_BYTES] TH_ARENA;   // from the generated model_blob.h
 *   if (th_interp_init(&ctx, th_model_blob, th_model_blob_len, arena, sizeof arena)) {
 *       th_interp_error e = th_interp_last_error(&ctx);   // refused: e.status, e.op, e.detail
 *   }
 *   th_interp_tensor in;  th_interp_input(&ctx, 0, &in);   // in.data, in.bytes, in.scale...
 *   memcpy(in.data, my_input, in.bytes);
 *   th_interp_invoke(&ctx);
 *   th_interp_tensor out; th_interp_output(&ctx, 0, &out);
 *   const uint32_t *ticks = th_interp_profile(&ctx, &n);   // per op, th_counter_read() units
 *
 * th_interp_init validates the whole blob before anything runs (magic, version, CRC-32,
 * every offset and size inside the blob and the arena with overflow-checked arithmetic,
 * every kernel id present in this firmware's op table, tensor shapes consistent with each
 * op's parameters and the kernels' scratch needs) and refuses a bad blob with a status.
 * The blob must stay valid and unchanged while the context uses it. No malloc, no globals
 * (the op table th_interp_kernels[] is const, generated per model or for all ops).
 */
#ifndef TH_INTERP_H
#define TH_INTERP_H

#include <stddef.h>
#include <stdint.h>

#include "th_interp_abi.h" /* kernel ids, parameter words, limits (generated) */

#ifdef __cplusplus
extern "C" {
#endif

#define TH_INTERP_BLOB_VERSION 1u

typedef enum {
    TH_INTERP_OK = 0,
    TH_INTERP_E_ARG = 1,          /* NULL pointer or misaligned blob/arena */
    TH_INTERP_E_TRUNCATED = 2,    /* blob shorter than its header or its total_size */
    TH_INTERP_E_MAGIC = 3,
    TH_INTERP_E_VERSION = 4,      /* blob version or kernel ABI not supported */
    TH_INTERP_E_CRC = 5,
    TH_INTERP_E_LAYOUT = 6,       /* a section lies outside the blob, overlaps or is misaligned */
    TH_INTERP_E_BUILD = 7,        /* blob flags do not match this build (filter layout) */
    TH_INTERP_E_TENSOR = 8,       /* bad tensor record (detail = tensor index) */
    TH_INTERP_E_OP = 9,           /* bad op record or io list (detail = op index) */
    TH_INTERP_E_KERNEL = 10,      /* kernel id not in this firmware (detail = kernel id) */
    TH_INTERP_E_PARAMS = 11,      /* op params or shapes inconsistent (op = op index) */
    TH_INTERP_E_ARENA = 12,       /* arena too small (detail = bytes needed) */
    TH_INTERP_E_SCRATCH = 13,     /* op scratch smaller than its kernel needs (detail = bytes) */
    TH_INTERP_E_TOO_MANY = 14,    /* more ops than TH_INTERP_MAX_OPS */
    TH_INTERP_E_STATE = 15,       /* no valid model (init failed or not called) */
    TH_INTERP_E_INDEX = 16,       /* input/output index out of range */
    TH_INTERP_E_KERNEL_FAILED = 17 /* a kernel returned an error at run time (detail = status) */
} th_interp_status;

typedef struct {
    th_interp_status status;
    int32_t op;      /* op index (execution order) the error is about, -1 if none */
    uint32_t detail; /* status-specific: tensor index, kernel id, bytes needed, ... */
} th_interp_error;

/* dtype codes (same as the serial protocol's) */
enum { TH_INTERP_INT8 = 0, TH_INTERP_UINT8 = 1, TH_INTERP_INT16 = 2, TH_INTERP_INT32 = 3,
       TH_INTERP_FLOAT32 = 4, TH_INTERP_INT64 = 5 /* constants only: 16x8 biases */ };

typedef struct {
    void *data;       /* in the arena (activations) or the blob (constants) */
    uint32_t bytes;
    uint8_t dtype;
    uint8_t rank;
    uint8_t flags;    /* blob tensor flags (bit 0: filter stored interleaved, 1: variable) */
    uint8_t present;  /* 0 for an absent optional op input */
    int32_t dims[TH_INTERP_MAX_RANK];
    float scale;      /* 0 when not quantized */
    int32_t zero_point;
} th_interp_tensor;

typedef struct th_interp {
    const uint8_t *blob;
    uint32_t blob_len;
    uint8_t *arena;
    uint32_t arena_len;
    uint8_t ready;
    th_interp_error error;
    /* decoded header */
    uint32_t flags, arena_size, n_tensors, n_ops, n_inputs, n_outputs;
    uint32_t tensors_off, ops_off, io_off, io_count, params_off, params_words;
    uint32_t consts_off, consts_size, name_off, name_len;
    uint32_t crc;
    uint64_t last_total;                  /* counter ticks of the last invoke */
    volatile int32_t running_op;          /* op being run (execution order), -1 outside */
    uint32_t profile[TH_INTERP_MAX_OPS];  /* counter ticks per op of the last invoke */
} th_interp;

/* Validate `blob` completely and bind it to `arena`. The blob must be 4-byte aligned (16 for
 * MVE kernels), the arena 16-byte aligned. Returns TH_INTERP_OK or the refusal status. */
th_interp_status th_interp_init(th_interp *ctx, const uint8_t *blob, uint32_t blob_len,
                                uint8_t *arena, uint32_t arena_len);

/* Set every variable tensor (state kept across invokes, blob tensor flag bit 1) to its
 * reset value: the zero point for int8, 0 otherwise (TFLM's ResetVariableTensors). init
 * does it too. */
th_interp_status th_interp_reset_state(th_interp *ctx);

/* Forget the model (after which only init is allowed). */
void th_interp_reset(th_interp *ctx);

int th_interp_ready(const th_interp *ctx);
uint32_t th_interp_num_inputs(const th_interp *ctx);
uint32_t th_interp_num_outputs(const th_interp *ctx);
uint32_t th_interp_num_ops(const th_interp *ctx);
/* Arena bytes the model needs (<= the arena passed to init). */
uint32_t th_interp_arena_used(const th_interp *ctx);
/* The model's name (NUL-terminated inside the blob) and its blob CRC-32. */
const char *th_interp_model_name(const th_interp *ctx);
uint32_t th_interp_model_crc(const th_interp *ctx);

/* Model input/output `index`: where to write / read it, its shape and quantization. */
th_interp_status th_interp_input(th_interp *ctx, uint32_t index, th_interp_tensor *info);
th_interp_status th_interp_output(th_interp *ctx, uint32_t index, th_interp_tensor *info);

/* Run every op once. With profile != 0, each op's th_counter_read() ticks are recorded. */
th_interp_status th_interp_invoke_ex(th_interp *ctx, int profile);
th_interp_status th_interp_invoke(th_interp *ctx);

th_interp_error th_interp_last_error(const th_interp *ctx);
/* Short English name of a status, for logs. */
const char *th_interp_status_name(th_interp_status status);

/* Per-op ticks of the last profiled invoke (n = number of ops), total in *total if non-NULL.
 * Unit: th_counter_unit() of the board. */
const uint32_t *th_interp_profile(const th_interp *ctx, uint32_t *n, uint64_t *total);

/* Source op index in the .tflite and kernel id of op `i` (execution order), for reports. */
int32_t th_interp_op_source(const th_interp *ctx, uint32_t i);
int32_t th_interp_op_kernel(const th_interp *ctx, uint32_t i);

#ifdef __cplusplus
}
#endif

#endif /* TH_INTERP_H */
