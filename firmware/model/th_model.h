/*
 * th_model.h - the model interface every backend implements (ARCHITECTURE.md §4.6).
 *
 * The protocol firmware (firmware/app/main.c) runs a model only through these functions, so
 * the same firmware serves the interpreter (firmware/interpreter/th_interp_model.c: a blob
 * bound to a static arena) and generated code (one model compiled in). One model per
 * firmware: the functions act on the firmware's model, there is no handle.
 *
 * Memory: the implementation owns the arena and every buffer it describes. Tensor data
 * pointers stay valid until the next th_model_init or a successful load (th_model_load_*).
 * Inputs and outputs may share arena bytes with each other and with intermediate tensors:
 * write every input before each invoke and read outputs before the next write.
 */
#ifndef TH_MODEL_H
#define TH_MODEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TH_MODEL_MAX_RANK 6
/* Inputs and outputs (each) the protocol firmware describes in INFO; the host refuses a
 * model with more before it writes a file (codegen/interpreter_abi.py LIMITS checks this). */
#define TH_MODEL_MAX_IO 16

typedef enum {
    TH_MODEL_OK = 0,
    TH_MODEL_E_NOT_READY = 1, /* no valid model bound (init failed, a load is under way) */
    TH_MODEL_E_INDEX = 2,     /* no such input or output */
    TH_MODEL_E_FAILED = 3,    /* invoke or bind failed; th_model_detail() says more */
    TH_MODEL_E_TOO_LARGE = 4, /* a model image larger than the load buffer */
    TH_MODEL_E_SEQUENCE = 5,  /* a load chunk out of order */
    TH_MODEL_E_UNSUPPORTED = 6 /* this backend cannot do that (e.g. load a model) */
} th_model_status;

/* Element types (the protocol's codes, firmware/protocol/README.md). */
enum { TH_MODEL_INT8 = 0, TH_MODEL_UINT8 = 1, TH_MODEL_INT16 = 2, TH_MODEL_INT32 = 3,
       TH_MODEL_FLOAT32 = 4 };

typedef struct {
    void *data; /* in the arena */
    uint32_t bytes;
    uint8_t dtype;
    uint8_t rank;
    int32_t dims[TH_MODEL_MAX_RANK];
    float scale; /* real = scale * (q - zero_point); 0 when not quantized */
    int32_t zero_point;
} th_model_tensor;

typedef struct {
    const char *backend; /* "interpreter", "compiled" */
    const char *name;    /* the model's name, "" when none is bound */
    uint32_t hash;       /* identifies the model (the interpreter: its blob's CRC-32) */
    uint32_t arena_bytes; /* arena the model uses (the whole arena when none is bound) */
    uint32_t n_ops;       /* entries of the per-op profile */
    uint32_t n_inputs;
    uint32_t n_outputs;
    int ready; /* a model is bound and can be invoked */
} th_model_info;

/* Bind the model compiled into the firmware. Called once at start-up; TH_MODEL_OK or why not
 * (th_model_detail()). */
th_model_status th_model_init(void);

void th_model_get_info(th_model_info *info);

/* Where input `index` is written before an invoke. A model converted with --patch (its first
 * layers in row bands, plan/patch.py) reuses the input's bytes during the invoke: the input
 * is not preserved across th_model_invoke and must be written again before the next one. */
th_model_status th_model_input(uint32_t index, th_model_tensor *tensor);
th_model_status th_model_output(uint32_t index, th_model_tensor *tensor);

/* Run the model once. With profile != 0, per-op counts are recorded (th_model_profile) and
 * the marks of th_profile.h are made; *total (may be NULL) gets the invoke's counter ticks. */
th_model_status th_model_invoke(int profile, uint64_t *total);

/* Set the model's variable tensors (state an op keeps from one invoke to the next, e.g.
 * SVDF's) to their reset values — the zero point for int8, 0 otherwise, as TFLite Micro's
 * ResetVariableTensors — as after th_model_init. TH_MODEL_OK also for a model without
 * state; TH_MODEL_E_NOT_READY without a model. */
th_model_status th_model_reset_state(void);

/* Per-op counter ticks of the last profiled invoke, execution order; *n_ops entries. */
const uint32_t *th_model_profile(uint32_t *n_ops);

/* th_model_detail() of an invoke that wrote past the arena (debug builds, th_guard.h). */
#define TH_MODEL_DETAIL_ARENA_GUARD 0x6A4D0000u
/* The detail the protocol firmware reports for an invoke that overflowed the stack (its canary
 * words, th_board.h, changed): the model's outputs and the memory below the stack are suspect. */
#define TH_MODEL_DETAIL_STACK_OVERFLOW 0x6A4D0001u

/* A backend-defined number qualifying the last failure (the interpreter: its status in the
 * low byte, the failing op + 1 above; TH_MODEL_DETAIL_ARENA_GUARD), 0 when none. */
uint32_t th_model_detail(void);

/* The op an invoke is running (its position in execution order), -1 outside an invoke: what a
 * fault handler reports. A plain read, safe from an exception handler. */
int32_t th_model_running_op(void);

/* Replacing the model at run time (LOAD_MODEL). A backend that cannot returns 0 from
 * th_model_can_load and TH_MODEL_E_UNSUPPORTED from the others. From the first chunk of a
 * load on, the previous model is gone; the new one is bound only after the final chunk
 * verified. Chunks arrive in order, offset == bytes received so far. */
int th_model_can_load(void);
uint32_t th_model_load_capacity(void); /* bytes of the load buffer, 0: none */
th_model_status th_model_load_chunk(uint32_t offset, const uint8_t *chunk, uint32_t len,
                                    uint32_t total, int final);

#ifdef __cplusplus
}
#endif

#endif /* TH_MODEL_H */
