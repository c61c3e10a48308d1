/*
 * libFuzzer target: the serial frame decoder and dispatcher (th_proto) on arbitrary input.
 * The input is a list of records: a length byte, then that many bytes. A record whose first
 * byte is odd is fed raw (garbage, partial frames, bad COBS or CRC); an even one becomes a
 * well-formed frame (type, seq, payload from the record, a correct CRC, COBS-encoded), so
 * the fuzzer also reaches every request handler with arbitrary payloads. The application
 * behind it is a small fake with one input and one output of 64 bytes and a 4-op profile.
 */
#include <stdint.h>
#include <string.h>

#include "th_proto.h"

static uint8_t input[64], output[64];

static void app_write(void *ctx, const uint8_t *data, size_t len)
{
    (void)ctx;
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < len; i++) {
        sink ^= data[i]; /* ASan checks every byte the protocol sends */
    }
    (void)sink;
}

static th_proto_status app_info(void *ctx, th_proto_info *info)
{
    static const th_proto_tensor_info io = {1, 2, {8, 8}, 0.5f, -3};
    (void)ctx;
    info->fw_version = "fuzz";
    info->board = "host";
    info->backend = "interpreter";
    info->model_name = "fake";
    info->n_ops = 4;
    info->n_inputs = 1;
    info->n_outputs = 1;
    info->inputs = &io;
    info->outputs = &io;
    info->flags = TH_PROTO_FLAG_MODEL_READY;
    info->selfcheck = "ok";
    return TH_PROTO_OK;
}

static th_proto_status app_set_input(void *ctx, uint8_t tensor, uint32_t offset,
                                     const uint8_t *data, uint32_t len)
{
    (void)ctx;
    if (tensor != 0 || offset > sizeof input || len > sizeof input - offset) {
        return TH_PROTO_E_BAD_ARG;
    }
    memcpy(input + offset, data, len);
    return TH_PROTO_OK;
}

static th_proto_status app_invoke(void *ctx, uint64_t *elapsed, uint32_t *stack_peak)
{
    (void)ctx;
    memcpy(output, input, sizeof output);
    *elapsed = 1234u;
    *stack_peak = 100u;
    return TH_PROTO_OK;
}

static th_proto_status app_get_output(void *ctx, uint8_t tensor, uint32_t offset, uint8_t *dst,
                                      uint32_t max, uint32_t *written, uint32_t *total)
{
    (void)ctx;
    if (tensor != 0 || offset > sizeof output) {
        return TH_PROTO_E_BAD_ARG;
    }
    *total = sizeof output;
    *written = sizeof output - offset < max ? (uint32_t)sizeof output - offset : max;
    memcpy(dst, output + offset, *written);
    return TH_PROTO_OK;
}

static th_proto_status app_get_profile(void *ctx, uint16_t first, uint32_t *counts,
                                       uint16_t max, uint16_t *written, uint16_t *total)
{
    (void)ctx;
    *total = 4u;
    *written = 0u;
    for (uint16_t k = first; k < 4u && *written < max; k++) {
        counts[(*written)++] = 10u * k;
    }
    return TH_PROTO_OK;
}

static th_proto_status app_load_model(void *ctx, uint32_t offset, const uint8_t *chunk,
                                      uint32_t len, uint32_t total, int final)
{
    (void)ctx;
    (void)offset;
    (void)chunk;
    (void)len;
    (void)total;
    return final ? TH_PROTO_E_MODEL_INVALID : TH_PROTO_OK;
}

/* One frame as the host sends it: 0x00, COBS(type, seq, len, payload, crc), 0x00. */
static void feed_frame(th_proto *p, const uint8_t *rec, size_t n)
{
    uint8_t raw[5 + 255 + 4], enc[sizeof raw + 8];
    size_t k;
    const size_t plen = n > 3 ? n - 3 : 0;
    size_t code_at = 1, out = 2;
    raw[0] = n > 1 ? rec[1] : 0;
    raw[1] = n > 2 ? rec[2] : 0;
    raw[2] = 0;
    raw[3] = (uint8_t)plen;
    raw[4] = 0;
    memcpy(raw + 5, rec + 3, plen);
    const uint32_t crc = th_proto_crc32(0u, raw, 5 + plen);
    memcpy(raw + 5 + plen, &crc, 4);
    enc[0] = 0;
    for (k = 0; k < 5 + plen + 4; k++) { /* COBS: a block ends at a zero or after 254 bytes */
        if (raw[k] == 0) {
            enc[code_at] = (uint8_t)(out - code_at);
            code_at = out++;
        } else {
            enc[out++] = raw[k];
            if (out - code_at == 0xFF) {
                enc[code_at] = 0xFF;
                code_at = out++;
            }
        }
    }
    enc[code_at] = (uint8_t)(out - code_at);
    enc[out++] = 0;
    th_proto_feed(p, enc, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static th_proto proto;
    static th_proto_app app;
    app.write = app_write;
    app.info = app_info;
    app.set_input = app_set_input;
    app.invoke = app_invoke;
    app.get_output = app_get_output;
    app.get_profile = app_get_profile;
    app.load_model = app_load_model;
    th_proto_init(&proto, &app);
    size_t i = 0;
    while (i < size) {
        const size_t n = data[i] < size - i - 1 ? data[i] : size - i - 1;
        const uint8_t *rec = data + i + 1;
        if (n > 0 && (rec[0] & 1u)) {
            th_proto_feed(&proto, rec + 1, n - 1);
        } else {
            feed_frame(&proto, rec, n);
        }
        i += n + 1;
    }
    return 0;
}
