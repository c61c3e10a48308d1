/*
 * th_proto: framing, CRC, receiver state machine and request dispatcher.
 * Wire format: README.md in this folder.
 */
#include "th_proto.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* CRC-32, reflected polynomial 0xEDB88320, 4 bits at a time (64-byte table). */

static const uint32_t crc_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
    0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
    0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};

uint32_t th_proto_crc32(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *b = (const uint8_t *)data;
    crc = ~crc;
    while (len-- > 0u) {
        crc ^= *b++;
        crc = (crc >> 4) ^ crc_nibble[crc & 15u];
        crc = (crc >> 4) ^ crc_nibble[crc & 15u];
    }
    return ~crc;
}

/* ------------------------------------------------------------------ */
/* Little-endian helpers */

static uint16_t rd16(const uint8_t *b) { return (uint16_t)(b[0] | (b[1] << 8)); }

static uint32_t rd32(const uint8_t *b)
{
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
           ((uint32_t)b[3] << 24);
}

static void wr16(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}

static void wr32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
}

/* ------------------------------------------------------------------ */
/* COBS. The encoder never emits a trailing 0x01 after a full 0xFF block;
 * the decoder accepts both forms. */

/* Length of the run of non-zero bytes at src[0..], at most 254. */
static size_t cobs_run(const uint8_t *src, size_t len)
{
    size_t run = 0;
    while (run < len && run < 254u && src[run] != 0u) {
        run++;
    }
    return run;
}

size_t th_proto_cobs_encode(const uint8_t *src, size_t len, uint8_t *dst)
{
    size_t i = 0, o = 0;
    for (;;) {
        size_t run = cobs_run(src + i, len - i);
        dst[o++] = (uint8_t)(run + 1u);
        memcpy(dst + o, src + i, run);
        o += run;
        i += run;
        if (i >= len) {
            break;
        }
        if (run == 254u) {
            continue; /* full block: no zero consumed */
        }
        i++; /* src[i] == 0, implied by the block code */
        if (i == len) {
            dst[o++] = 1u; /* trailing zero needs an empty final block */
            break;
        }
    }
    return o;
}

/* Send one raw frame: 0x00, COBS(raw), 0x00, streamed straight from raw. */
static void send_raw(const th_proto *p, const uint8_t *raw, size_t len)
{
    const th_proto_app *app = p->app;
    const uint8_t zero = 0u, one = 1u;
    size_t i = 0;
    app->write(app->ctx, &zero, 1);
    for (;;) {
        size_t run = cobs_run(raw + i, len - i);
        uint8_t code = (uint8_t)(run + 1u);
        app->write(app->ctx, &code, 1);
        if (run > 0u) {
            app->write(app->ctx, raw + i, run);
        }
        i += run;
        if (i >= len) {
            break;
        }
        if (run == 254u) {
            continue;
        }
        i++;
        if (i == len) {
            app->write(app->ctx, &one, 1);
            break;
        }
    }
    app->write(app->ctx, &zero, 1);
}

/* Fill header and CRC around a payload already at raw[5..5+plen). */
static size_t seal(uint8_t *raw, uint8_t type, uint16_t seq, uint32_t plen)
{
    uint32_t crc;
    raw[0] = type;
    wr16(raw + 1, seq);
    wr16(raw + 3, plen);
    crc = th_proto_crc32(0u, raw, TH_PROTO_HEADER_SIZE + plen);
    wr32(raw + TH_PROTO_HEADER_SIZE + plen, crc);
    return TH_PROTO_HEADER_SIZE + plen + TH_PROTO_CRC_SIZE;
}

#define ERROR_PAYLOAD_SIZE 6u

static size_t build_error(uint8_t *raw, uint16_t seq, uint8_t code, uint8_t req_type,
                          uint32_t detail)
{
    uint8_t *pl = raw + TH_PROTO_HEADER_SIZE;
    pl[0] = code;
    pl[1] = req_type;
    wr32(pl + 2, detail);
    return seal(raw, TH_PROTO_ERROR, seq, ERROR_PAYLOAD_SIZE);
}

/* An error about a frame that could not be trusted: built on the stack so the
 * cached reply of the last valid request survives. */
static void send_link_error(th_proto *p, uint16_t seq, uint8_t code, uint8_t req_type,
                            uint32_t detail)
{
    uint8_t raw[TH_PROTO_HEADER_SIZE + ERROR_PAYLOAD_SIZE + TH_PROTO_CRC_SIZE];
    size_t n = build_error(raw, seq, code, req_type, detail);
    p->frames_bad++;
    send_raw(p, raw, n);
}

/* ------------------------------------------------------------------ */
/* INFO serialization through a window [start, start+cap), so an INFO larger
 * than one frame is sent in chunks without a buffer for the whole of it. */

typedef struct {
    uint8_t *dst;
    uint32_t start, cap, pos;
} window;

static void win_byte(window *w, uint8_t b)
{
    if (w->pos >= w->start && w->pos - w->start < w->cap) {
        w->dst[w->pos - w->start] = b;
    }
    w->pos++;
}

static void win_u16(window *w, uint32_t v)
{
    win_byte(w, (uint8_t)v);
    win_byte(w, (uint8_t)(v >> 8));
}

static void win_u32(window *w, uint32_t v)
{
    win_u16(w, v & 0xFFFFu);
    win_u16(w, v >> 16);
}

static void win_str(window *w, const char *s)
{
    size_t n = s ? strlen(s) : 0u;
    size_t i;
    if (n > 255u) {
        n = 255u;
    }
    win_byte(w, (uint8_t)n);
    for (i = 0; i < n; i++) {
        win_byte(w, (uint8_t)s[i]);
    }
}

static void win_tensors(window *w, const th_proto_tensor_info *t, uint8_t n)
{
    uint8_t i, d;
    for (i = 0; i < n; i++) {
        uint8_t rank = t[i].rank > TH_PROTO_MAX_RANK ? (uint8_t)TH_PROTO_MAX_RANK : t[i].rank;
        uint32_t scale_bits;
        memcpy(&scale_bits, &t[i].scale, sizeof scale_bits);
        win_byte(w, t[i].dtype);
        win_byte(w, rank);
        for (d = 0; d < rank; d++) {
            win_u32(w, t[i].dims[d]);
        }
        win_u32(w, scale_bits);
        win_u32(w, (uint32_t)t[i].zero_point);
    }
}

static void win_info(window *w, const th_proto_info *in, const th_proto *p)
{
    win_u16(w, TH_PROTO_VERSION);
    win_byte(w, in->flags);
    win_str(w, in->fw_version);
    win_str(w, in->board);
    win_str(w, in->backend);
    win_str(w, in->model_name);
    win_u32(w, in->model_hash);
    win_u32(w, in->arena_size);
    win_byte(w, in->counter_unit);
    win_u32(w, in->counter_hz);
    win_u16(w, in->n_ops);
    win_byte(w, in->inputs ? in->n_inputs : 0u);
    win_byte(w, in->outputs ? in->n_outputs : 0u);
    if (in->inputs) {
        win_tensors(w, in->inputs, in->n_inputs);
    }
    if (in->outputs) {
        win_tensors(w, in->outputs, in->n_outputs);
    }
    /* Optional trailer (older hosts stop before it): the self-check verdict ("" if none),
     * then the link counters, so a host can account for every frame it sent. */
    win_str(w, in->selfcheck);
    win_u32(w, p->frames_rx);
    win_u32(w, p->frames_bad);
    win_u32(w, p->replies_cached);
}

/* ------------------------------------------------------------------ */
/* Dispatcher. Each handler writes its reply payload at pl (capacity
 * TH_PROTO_MAX_PAYLOAD), sets *plen and returns a status; a non-OK status
 * turns the reply into an ERROR frame. */

typedef struct {
    const uint8_t *req; /* request payload */
    uint32_t req_len;
    uint8_t *pl; /* reply payload */
    uint32_t plen;
} exchange;

static th_proto_status get_info(th_proto *p, th_proto_info *info)
{
    memset(info, 0, sizeof *info);
    if (p->app->info) {
        th_proto_status st = p->app->info(p->app->ctx, info);
        if (st != TH_PROTO_OK) {
            return st;
        }
    }
    if (p->app->load_model) {
        info->flags |= TH_PROTO_FLAG_CAN_LOAD;
    }
    return TH_PROTO_OK;
}

static th_proto_status do_hello(th_proto *p, exchange *x)
{
    th_proto_info info;
    th_proto_status st = get_info(p, &info);
    if (st != TH_PROTO_OK) {
        return st;
    }
    wr16(x->pl, TH_PROTO_VERSION);
    wr16(x->pl + 2, TH_PROTO_MAX_PAYLOAD);
    x->pl[4] = info.flags;
    x->plen = 5u;
    return TH_PROTO_OK;
}

static th_proto_status do_info(th_proto *p, exchange *x)
{
    th_proto_info info;
    th_proto_status st;
    window w;
    uint32_t offset = 0, chunk;
    if (x->req_len != 0u && x->req_len != 4u) {
        th_proto_set_detail(p, x->req_len);
        return TH_PROTO_E_BAD_PAYLOAD;
    }
    if (x->req_len == 4u) {
        offset = rd32(x->req);
    }
    if (!p->app->info) {
        return TH_PROTO_E_UNSUPPORTED;
    }
    st = get_info(p, &info);
    if (st != TH_PROTO_OK) {
        return st;
    }
    w.dst = x->pl + 8;
    w.start = offset;
    w.cap = TH_PROTO_MAX_PAYLOAD - 8u;
    w.pos = 0;
    win_info(&w, &info, p);
    if (offset > w.pos) {
        th_proto_set_detail(p, w.pos);
        return TH_PROTO_E_BAD_ARG;
    }
    chunk = w.pos - offset < w.cap ? w.pos - offset : w.cap;
    wr32(x->pl, w.pos);
    wr32(x->pl + 4, offset);
    x->plen = 8u + chunk;
    return TH_PROTO_OK;
}

static th_proto_status do_set_input(th_proto *p, exchange *x)
{
    if (x->req_len < 5u) {
        th_proto_set_detail(p, x->req_len);
        return TH_PROTO_E_BAD_PAYLOAD;
    }
    if (!p->app->set_input) {
        return TH_PROTO_E_UNSUPPORTED;
    }
    x->plen = 0;
    return p->app->set_input(p->app->ctx, x->req[0], rd32(x->req + 1), x->req + 5,
                             x->req_len - 5u);
}

static th_proto_status do_invoke(th_proto *p, exchange *x)
{
    uint64_t elapsed = 0;
    uint32_t stack_peak = 0;
    th_proto_status st;
    if (x->req_len != 0u) {
        th_proto_set_detail(p, x->req_len);
        return TH_PROTO_E_BAD_PAYLOAD;
    }
    if (!p->app->invoke) {
        return TH_PROTO_E_UNSUPPORTED;
    }
    st = p->app->invoke(p->app->ctx, &elapsed, &stack_peak);
    if (st != TH_PROTO_OK) {
        return st;
    }
    wr32(x->pl, (uint32_t)elapsed);
    wr32(x->pl + 4, (uint32_t)(elapsed >> 32));
    wr32(x->pl + 8, stack_peak);
    x->plen = 12u;
    return TH_PROTO_OK;
}

static th_proto_status do_get_output(th_proto *p, exchange *x)
{
    const uint32_t cap = TH_PROTO_MAX_PAYLOAD - 8u;
    uint32_t offset, max, written = 0, total = 0;
    th_proto_status st;
    if (x->req_len != 7u) {
        th_proto_set_detail(p, x->req_len);
        return TH_PROTO_E_BAD_PAYLOAD;
    }
    if (!p->app->get_output) {
        return TH_PROTO_E_UNSUPPORTED;
    }
    offset = rd32(x->req + 1);
    max = rd16(x->req + 5);
    if (max == 0u || max > cap) {
        max = cap;
    }
    st = p->app->get_output(p->app->ctx, x->req[0], offset, x->pl + 8, max, &written, &total);
    if (st != TH_PROTO_OK) {
        return st;
    }
    if (written > max) {
        return TH_PROTO_E_INTERNAL;
    }
    wr32(x->pl, total);
    wr32(x->pl + 4, offset);
    x->plen = 8u + written;
    return TH_PROTO_OK;
}

static th_proto_status do_get_profile(th_proto *p, exchange *x)
{
    /* Fetched in small batches so the stack stays small. */
    enum { BATCH = 16 };
    const uint32_t cap = (TH_PROTO_MAX_PAYLOAD - 4u) / 4u;
    uint32_t counts[BATCH];
    uint16_t first = 0, total = 0, n = 0;
    if (x->req_len != 0u && x->req_len != 2u) {
        th_proto_set_detail(p, x->req_len);
        return TH_PROTO_E_BAD_PAYLOAD;
    }
    if (x->req_len == 2u) {
        first = rd16(x->req);
    }
    if (!p->app->get_profile) {
        return TH_PROTO_E_UNSUPPORTED;
    }
    for (;;) {
        uint16_t want = (uint16_t)(cap - n < BATCH ? cap - n : BATCH);
        uint16_t got = 0, i;
        th_proto_status st = p->app->get_profile(p->app->ctx, (uint16_t)(first + n), counts,
                                                 want, &got, &total);
        if (st != TH_PROTO_OK) {
            return st;
        }
        if (got > want) {
            return TH_PROTO_E_INTERNAL;
        }
        for (i = 0; i < got; i++) {
            wr32(x->pl + 4u + 4u * (uint32_t)(n + i), counts[i]);
        }
        n = (uint16_t)(n + got);
        if (got < want || n >= cap || (uint32_t)first + n >= total) {
            break;
        }
    }
    if (first > total) {
        th_proto_set_detail(p, total);
        return TH_PROTO_E_BAD_ARG;
    }
    wr16(x->pl, total);
    wr16(x->pl + 2, first);
    x->plen = 4u + 4u * (uint32_t)n;
    return TH_PROTO_OK;
}

static th_proto_status do_load_model(th_proto *p, exchange *x)
{
    uint32_t offset, total, len;
    th_proto_status st;
    if (x->req_len < 9u) {
        th_proto_set_detail(p, x->req_len);
        return TH_PROTO_E_BAD_PAYLOAD;
    }
    if (!p->app->load_model) {
        return TH_PROTO_E_UNSUPPORTED;
    }
    offset = rd32(x->req);
    total = rd32(x->req + 4);
    len = x->req_len - 9u;
    st = p->app->load_model(p->app->ctx, offset, x->req + 9, len, total,
                            (x->req[8] & 1u) != 0u);
    if (st != TH_PROTO_OK) {
        return st;
    }
    wr32(x->pl, offset + len);
    x->plen = 4u;
    return TH_PROTO_OK;
}

static th_proto_status do_reset_state(th_proto *p, exchange *x)
{
    if (x->req_len != 0u) {
        th_proto_set_detail(p, x->req_len);
        return TH_PROTO_E_BAD_PAYLOAD;
    }
    if (!p->app->reset_state) {
        return TH_PROTO_E_UNSUPPORTED;
    }
    return p->app->reset_state(p->app->ctx);
}

static void dispatch(th_proto *p, uint8_t type, uint16_t seq, const uint8_t *req,
                     uint32_t req_len)
{
    exchange x;
    th_proto_status st;
    x.req = req;
    x.req_len = req_len;
    x.pl = p->tx_buf + TH_PROTO_HEADER_SIZE;
    x.plen = 0;
    p->error_detail = 0;
    switch (type) {
    case TH_PROTO_HELLO:
        st = do_hello(p, &x);
        break;
    case TH_PROTO_INFO:
        st = do_info(p, &x);
        break;
    case TH_PROTO_SET_INPUT:
        st = do_set_input(p, &x);
        break;
    case TH_PROTO_INVOKE:
        st = do_invoke(p, &x);
        break;
    case TH_PROTO_GET_OUTPUT:
        st = do_get_output(p, &x);
        break;
    case TH_PROTO_GET_PROFILE:
        st = do_get_profile(p, &x);
        break;
    case TH_PROTO_LOAD_MODEL:
        st = do_load_model(p, &x);
        break;
    case TH_PROTO_RESET_STATE:
        st = do_reset_state(p, &x);
        break;
    default:
        st = TH_PROTO_E_UNKNOWN_TYPE;
        p->error_detail = type;
        break;
    }
    if (st == TH_PROTO_OK) {
        p->tx_len = (uint32_t)seal(p->tx_buf, (uint8_t)(type | TH_PROTO_RESP), seq, x.plen);
    } else {
        p->tx_len = (uint32_t)build_error(p->tx_buf, seq, (uint8_t)st, type, p->error_detail);
    }
    send_raw(p, p->tx_buf, p->tx_len);
}

/* ------------------------------------------------------------------ */
/* Receiver */

void th_proto_init(th_proto *p, const th_proto_app *app)
{
    memset(p, 0, sizeof *p);
    p->app = app;
}

void th_proto_reset_rx(th_proto *p)
{
    p->rx_len = 0;
    p->rx_block = 0;
    p->rx_code = 0;
    p->rx_overflow = 0;
    p->rx_bad_cobs = 0;
}

void th_proto_set_detail(th_proto *p, uint32_t detail) { p->error_detail = detail; }

void th_proto_send_ready(th_proto *p)
{
    uint8_t raw[TH_PROTO_HEADER_SIZE + 5u + TH_PROTO_CRC_SIZE];
    th_proto_info info;
    uint8_t flags = 0;
    if (get_info(p, &info) == TH_PROTO_OK) {
        flags = info.flags;
    }
    wr16(raw + TH_PROTO_HEADER_SIZE, TH_PROTO_VERSION);
    wr16(raw + TH_PROTO_HEADER_SIZE + 2, TH_PROTO_MAX_PAYLOAD);
    raw[TH_PROTO_HEADER_SIZE + 4] = flags;
    send_raw(p, raw, seal(raw, TH_PROTO_READY, 0u, 5u));
}

static void rx_store(th_proto *p, uint8_t b)
{
    if (p->rx_len < TH_PROTO_MAX_FRAME) {
        p->rx_buf[p->rx_len] = b;
        p->rx_len++;
    } else {
        p->rx_overflow = 1;
    }
}

static void frame_end(th_proto *p)
{
    const uint8_t *f = p->rx_buf;
    uint32_t n = p->rx_len;
    uint8_t type = n >= 1u ? f[0] : 0u;
    uint16_t seq = n >= 3u ? rd16(f + 1) : 0u;
    uint32_t plen, crc;

    p->frames_rx++;
    if (p->rx_overflow) {
        send_link_error(p, seq, TH_PROTO_E_FRAME_TOO_LONG, type, TH_PROTO_MAX_PAYLOAD);
        return;
    }
    if (p->rx_bad_cobs || n < TH_PROTO_HEADER_SIZE + TH_PROTO_CRC_SIZE) {
        send_link_error(p, seq, TH_PROTO_E_BAD_FRAME, type, n);
        return;
    }
    plen = rd16(f + 3);
    if (TH_PROTO_HEADER_SIZE + plen + TH_PROTO_CRC_SIZE != n) {
        send_link_error(p, seq, TH_PROTO_E_BAD_LENGTH, type, n);
        return;
    }
    crc = th_proto_crc32(0u, f, TH_PROTO_HEADER_SIZE + plen);
    if (crc != rd32(f + TH_PROTO_HEADER_SIZE + plen)) {
        send_link_error(p, seq, TH_PROTO_E_BAD_CRC, type, n);
        return;
    }
    /* A host retry of the request we just answered: its reply was lost, so
     * send the same reply again instead of acting twice. HELLO always runs
     * (it starts a session) and forgets the cache. */
    if (p->cache_valid && type != TH_PROTO_HELLO && type == p->last_type &&
        seq == p->last_seq && crc == p->last_crc) {
        p->replies_cached++;
        send_raw(p, p->tx_buf, p->tx_len);
        return;
    }
    dispatch(p, type, seq, f + TH_PROTO_HEADER_SIZE, plen);
    p->cache_valid = type != TH_PROTO_HELLO;
    p->last_type = type;
    p->last_seq = seq;
    p->last_crc = crc;
}

void th_proto_feed_byte(th_proto *p, uint8_t b)
{
    if (b == 0u) {
        if (p->rx_code != 0u) { /* empty frames (idle delimiters) are ignored */
            if (p->rx_block != 0u) {
                p->rx_bad_cobs = 1; /* block cut short by the delimiter */
            }
            frame_end(p);
        }
        th_proto_reset_rx(p);
        return;
    }
    if (p->rx_block == 0u) { /* code byte */
        if (p->rx_code != 0u && p->rx_code != 0xFFu) {
            rx_store(p, 0u);
        }
        p->rx_code = b;
        p->rx_block = (uint8_t)(b - 1u);
    } else {
        rx_store(p, b);
        p->rx_block--;
    }
}

void th_proto_feed(th_proto *p, const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; i++) {
        th_proto_feed_byte(p, data[i]);
    }
}

void th_proto_send_fault(th_proto *p, const uint8_t payload[TH_PROTO_FAULT_PAYLOAD])
{
    /* Its own buffer: the fault may have struck while tx_buf was half written. */
    uint8_t raw[TH_PROTO_HEADER_SIZE + TH_PROTO_FAULT_PAYLOAD + TH_PROTO_CRC_SIZE];
    memcpy(raw + TH_PROTO_HEADER_SIZE, payload, TH_PROTO_FAULT_PAYLOAD);
    send_raw(p, raw, seal(raw, TH_PROTO_FAULT, 0u, TH_PROTO_FAULT_PAYLOAD));
}
