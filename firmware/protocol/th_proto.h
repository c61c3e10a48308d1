/*
 * th_proto: the device end of the tinyhost serial protocol (ARCHITECTURE.md §4.5).
 * The wire format is specified in README.md next to this file; this header
 * is the C API the firmware application plugs into.
 *
 * - Transport-agnostic: the application feeds received bytes with
 *   th_proto_feed() and receives output through its write() callback.
 * - No malloc, no globals: all state lives in a th_proto the caller owns
 *   (about 2 * TH_PROTO_MAX_FRAME bytes: receive buffer + cached reply).
 * - Requests are dispatched synchronously from th_proto_feed() to the
 *   callbacks in th_proto_app. Every non-empty received frame gets exactly
 *   one reply frame (the *_RESP or an ERROR). A repeated request (same type,
 *   seq and CRC as the previous one) is answered from the cached reply
 *   without calling the application again.
 */
#ifndef TH_PROTO_H
#define TH_PROTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TH_PROTO_VERSION 1u

/* Largest payload of one frame; override with -DTH_PROTO_MAX_PAYLOAD=... */
#ifndef TH_PROTO_MAX_PAYLOAD
#define TH_PROTO_MAX_PAYLOAD 1024u
#endif
#if TH_PROTO_MAX_PAYLOAD < 64u || TH_PROTO_MAX_PAYLOAD > 65535u
#error "TH_PROTO_MAX_PAYLOAD must be in 64..65535"
#endif

#define TH_PROTO_HEADER_SIZE 5u /* type u8, seq u16, length u16 */
#define TH_PROTO_CRC_SIZE 4u
#define TH_PROTO_MAX_FRAME (TH_PROTO_HEADER_SIZE + TH_PROTO_MAX_PAYLOAD + TH_PROTO_CRC_SIZE)
#define TH_PROTO_MAX_RANK 8u

/* Frame types. A reply is its request type | 0x80. */
enum th_proto_type {
    TH_PROTO_HELLO = 0x01,
    TH_PROTO_INFO = 0x02,
    TH_PROTO_SET_INPUT = 0x03,
    TH_PROTO_INVOKE = 0x04,
    TH_PROTO_GET_OUTPUT = 0x05,
    TH_PROTO_GET_PROFILE = 0x06,
    TH_PROTO_LOAD_MODEL = 0x07,
    TH_PROTO_RESET_STATE = 0x08, /* protocol 1.2: variable tensors to their reset values */
    TH_PROTO_RESP = 0x80,
    TH_PROTO_FAULT = 0xFD, /* unsolicited, seq 0: the device faulted (payload: README) */
    TH_PROTO_READY = 0xFE, /* unsolicited, seq 0, payload as HELLO_RESP */
    TH_PROTO_ERROR = 0xFF
};

/* Status codes: 0 = OK, others are the ERROR frame codes on the wire.
 * Callbacks return one of these. */
typedef enum th_proto_status {
    TH_PROTO_OK = 0,
    /* Link errors: the frame was damaged and not acted on; the host resends it. */
    TH_PROTO_E_BAD_CRC = 1,        /* CRC mismatch */
    TH_PROTO_E_BAD_LENGTH = 2,     /* length field disagrees with the frame size */
    TH_PROTO_E_BAD_FRAME = 3,      /* invalid COBS, or shorter than header + CRC */
    TH_PROTO_E_FRAME_TOO_LONG = 4, /* longer than the receive buffer */
    /* Request errors: the frame was valid; resending the same request won't help. */
    TH_PROTO_E_UNKNOWN_TYPE = 5,   /* unknown request type */
    TH_PROTO_E_BAD_PAYLOAD = 6,    /* payload size wrong for the request type */
    TH_PROTO_E_BAD_STATE = 7,      /* not valid now (e.g. INVOKE with no model) */
    TH_PROTO_E_BAD_ARG = 8,        /* tensor index, offset or length out of range */
    TH_PROTO_E_TOO_LARGE = 9,      /* data too large for the device (e.g. a model) */
    TH_PROTO_E_MODEL_INVALID = 10, /* LOAD_MODEL: the blob failed verification */
    TH_PROTO_E_INTERNAL = 11,      /* application failure */
    TH_PROTO_E_UNSUPPORTED = 12    /* the application has no handler for it */
} th_proto_status;

/* INFO flags */
#define TH_PROTO_FLAG_MODEL_READY 0x01u /* a valid model is loaded: INVOKE may run */
#define TH_PROTO_FLAG_CAN_LOAD 0x02u    /* LOAD_MODEL is supported (set automatically) */

/* Tensor dtype codes */
enum th_proto_dtype {
    TH_PROTO_DT_INT8 = 0,
    TH_PROTO_DT_UINT8 = 1,
    TH_PROTO_DT_INT16 = 2,
    TH_PROTO_DT_INT32 = 3,
    TH_PROTO_DT_FLOAT32 = 4
};

/* Counter unit codes (ARCHITECTURE.md §4.7) */
enum th_proto_unit {
    TH_PROTO_UNIT_NONE = 0,
    TH_PROTO_UNIT_CYCLES = 1,
    TH_PROTO_UNIT_INSTRUCTIONS = 2,
    TH_PROTO_UNIT_HOST_NS = 3,
    TH_PROTO_UNIT_SYSTICK = 4
};

typedef struct th_proto_tensor_info {
    uint8_t dtype; /* enum th_proto_dtype */
    uint8_t rank;  /* <= TH_PROTO_MAX_RANK */
    uint32_t dims[TH_PROTO_MAX_RANK];
    float scale; /* 0 when not quantized */
    int32_t zero_point;
} th_proto_tensor_info;

/* What INFO reports. Strings are NUL-terminated, sent truncated to 255 bytes;
 * NULL is sent as "". */
typedef struct th_proto_info {
    const char *fw_version;
    const char *board;
    const char *backend; /* "interpreter" | "compiled" | ... */
    const char *model_name;
    uint32_t model_hash; /* CRC-32 of the model blob/source */
    uint32_t arena_size; /* bytes */
    uint8_t counter_unit; /* enum th_proto_unit */
    uint32_t counter_hz;  /* counter ticks per second, 0 if unknown */
    uint8_t flags;        /* TH_PROTO_FLAG_* */
    uint16_t n_ops;       /* number of GET_PROFILE entries */
    uint8_t n_inputs;
    uint8_t n_outputs;
    const th_proto_tensor_info *inputs;
    const th_proto_tensor_info *outputs;
    /* Start-up self-check verdict ("ok", "none", "fail:SSUB8,..."), sent after the tensors
     * when not NULL; older hosts ignore it, older firmware does not send it. */
    const char *selfcheck;
} th_proto_info;

/*
 * Application callbacks. Any request callback may be NULL: the request is
 * then answered with ERROR UNSUPPORTED. `ctx` is passed back unchanged.
 * Callbacks must not call th_proto_feed() (no re-entrancy).
 */
typedef struct th_proto_app {
    void *ctx;
    /* Transport: send bytes to the host (may be called several times per frame). */
    void (*write)(void *ctx, const uint8_t *data, size_t len);
    /* HELLO and INFO: fill *info (zeroed before the call). */
    th_proto_status (*info)(void *ctx, th_proto_info *info);
    /* SET_INPUT: store `len` bytes at byte `offset` of input tensor `tensor`. */
    th_proto_status (*set_input)(void *ctx, uint8_t tensor, uint32_t offset,
                                 const uint8_t *data, uint32_t len);
    /* INVOKE: run the model; *elapsed = total counter ticks (0 if not measured), and
     * *stack_peak = bytes of stack the invoke used (0 if not measured). */
    th_proto_status (*invoke)(void *ctx, uint64_t *elapsed, uint32_t *stack_peak);
    /* GET_OUTPUT: copy up to `max` bytes from byte `offset` of output `tensor`
     * into dst; set *written and *total (the tensor's size in bytes). */
    th_proto_status (*get_output)(void *ctx, uint8_t tensor, uint32_t offset, uint8_t *dst,
                                  uint32_t max, uint32_t *written, uint32_t *total);
    /* GET_PROFILE: copy up to `max` per-op counts starting at op `first`;
     * set *written and *total (number of ops). */
    th_proto_status (*get_profile)(void *ctx, uint16_t first, uint32_t *counts, uint16_t max,
                                   uint16_t *written, uint16_t *total);
    /* LOAD_MODEL: one chunk of a `total`-byte blob at `offset`; `final` != 0
     * on the last chunk, where the application verifies the whole blob and
     * returns TH_PROTO_E_MODEL_INVALID if it is not usable. */
    th_proto_status (*load_model)(void *ctx, uint32_t offset, const uint8_t *chunk,
                                  uint32_t len, uint32_t total, int final);
    /* RESET_STATE: set the model's variable tensors (state kept across invokes) to their
     * reset values, as after a fresh start. */
    th_proto_status (*reset_state)(void *ctx);
} th_proto_app;

/* Receiver and reply-cache state. Treat as opaque. */
typedef struct th_proto {
    const th_proto_app *app;
    /* receiver: streaming COBS decoder */
    uint32_t rx_len;     /* decoded bytes so far (saturates past the buffer) */
    uint8_t rx_block;    /* bytes left in the current COBS block, 0 = expect code */
    uint8_t rx_code;     /* current block's code byte, 0 = frame not started */
    uint8_t rx_overflow; /* frame longer than rx_buf */
    uint8_t rx_bad_cobs;
    /* reply cache: the last reply to a valid request */
    uint8_t cache_valid;
    uint8_t last_type;
    uint16_t last_seq;
    uint32_t last_crc;
    uint32_t tx_len;        /* raw length of the cached reply in tx_buf */
    uint32_t error_detail;  /* set by the app via th_proto_set_detail() */
    uint32_t frames_rx;     /* non-empty frames received */
    uint32_t frames_bad;    /* of which rejected before dispatch */
    uint32_t replies_cached; /* duplicates answered from the cache */
    uint8_t rx_buf[TH_PROTO_MAX_FRAME];
    uint8_t tx_buf[TH_PROTO_MAX_FRAME];
} th_proto;

/* Initialise `p` for `app` (which must outlive p). */
void th_proto_init(th_proto *p, const th_proto_app *app);
/* Announce readiness: send the unsolicited READY frame. Call once at boot. */
void th_proto_send_ready(th_proto *p);

/* The device faulted (called from the fault handler, which resets after it): send the
 * unsolicited FAULT frame. `payload` as firmware/protocol/README.md gives it. */
#define TH_PROTO_FAULT_PAYLOAD 33u
void th_proto_send_fault(th_proto *p, const uint8_t payload[TH_PROTO_FAULT_PAYLOAD]);
/* Feed received bytes; complete frames are processed and answered here. */
void th_proto_feed(th_proto *p, const uint8_t *data, size_t len);
void th_proto_feed_byte(th_proto *p, uint8_t byte);
/* Drop a partially received frame (e.g. after a long idle gap). */
void th_proto_reset_rx(th_proto *p);
/* From inside a callback that returns an error: the ERROR frame's detail word. */
void th_proto_set_detail(th_proto *p, uint32_t detail);

/* CRC-32 (IEEE 802.3, reflected, as zlib.crc32). Start with crc = 0 and
 * chain: th_proto_crc32(th_proto_crc32(0, a, n), b, m) == crc of a||b. */
uint32_t th_proto_crc32(uint32_t crc, const void *data, size_t len);

/* COBS-encode `len` bytes of `src` into `dst` (no delimiter). `dst` must hold
 * len + len/254 + 1 bytes. Returns the encoded length. */
size_t th_proto_cobs_encode(const uint8_t *src, size_t len, uint8_t *dst);

#ifdef __cplusplus
}
#endif

#endif /* TH_PROTO_H */
