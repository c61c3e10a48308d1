/*
 * th_proto self-test under ASan/UBSan: known CRC vectors, COBS round trips,
 * then random bytes and mutated frames fed into the receiver. Invariants:
 * no crash, every non-empty received frame gets exactly one reply, every
 * reply is a well-formed frame, and a valid HELLO after any garbage is
 * answered normally. Frames are decoded here with an independent COBS
 * decoder. Usage: fuzz [seed] [random_bytes]. Exit 0 = pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_app.h"

static unsigned failures;
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            if (failures < 20u) {                                              \
                fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            }                                                                  \
        }                                                                      \
    } while (0)

static uint32_t rng_state;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* Reference COBS decoder: returns decoded length or -1. */
static long cobs_decode(const uint8_t *src, size_t len, uint8_t *dst)
{
    size_t i = 0, o = 0;
    while (i < len) {
        uint8_t code = src[i++];
        uint8_t k;
        if (code == 0u) {
            return -1;
        }
        for (k = 1; k < code; k++) {
            if (i >= len || src[i] == 0u) {
                return -1;
            }
            dst[o++] = src[i++];
        }
        if (code != 0xFFu && i < len) {
            dst[o++] = 0u;
        }
    }
    return (long)o;
}

/* Output side: split what the device writes into frames and check each. */
typedef struct {
    uint8_t enc[2 * TH_PROTO_MAX_FRAME];
    size_t enc_len;
    unsigned replies;
    uint8_t last[TH_PROTO_MAX_FRAME];
    size_t last_len;
} capture;

static uint32_t rd32(const uint8_t *b)
{
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
           ((uint32_t)b[3] << 24);
}

static void cap_frame(capture *c)
{
    long n = cobs_decode(c->enc, c->enc_len, c->last);
    CHECK(n >= 9);
    if (n >= 9) {
        uint32_t plen = (uint32_t)(c->last[3] | (c->last[4] << 8));
        CHECK((uint32_t)n == 9u + plen);
        CHECK(plen <= TH_PROTO_MAX_PAYLOAD);
        if ((uint32_t)n == 9u + plen) {
            CHECK(th_proto_crc32(0u, c->last, 5u + plen) == rd32(c->last + 5 + plen));
        }
        CHECK(c->last[0] == TH_PROTO_ERROR || (c->last[0] & TH_PROTO_RESP) != 0u);
    }
    c->last_len = n > 0 ? (size_t)n : 0u;
    c->replies++;
}

static void cap_write(void *ctx, const uint8_t *data, size_t len)
{
    capture *c = (capture *)ctx;
    size_t i;
    for (i = 0; i < len; i++) {
        if (data[i] == 0u) {
            if (c->enc_len > 0u) {
                cap_frame(c);
            }
            c->enc_len = 0;
        } else if (c->enc_len < sizeof c->enc) {
            c->enc[c->enc_len++] = data[i];
        } else {
            CHECK(!"reply longer than any frame");
        }
    }
}

/* Input side: feed bytes and count the non-empty frames they form. */
typedef struct {
    fake_app *app;
    capture *cap;
    int in_frame;
    unsigned frames;
} feeder;

static void feed(feeder *fd, const uint8_t *data, size_t len)
{
    size_t i = 0;
    while (i < len) { /* random chunking exercises the streaming decoder */
        size_t n = 1u + rnd() % 300u;
        size_t k;
        if (n > len - i) {
            n = len - i;
        }
        for (k = 0; k < n; k++) {
            if (data[i + k] != 0u) {
                fd->in_frame = 1;
            } else if (fd->in_frame) {
                fd->frames++;
                fd->in_frame = 0;
            }
        }
        th_proto_feed(&fd->app->proto, data + i, n);
        i += n;
        CHECK(fd->cap->replies == fd->frames);
    }
}

static size_t make_frame(uint8_t *out, uint8_t type, uint16_t seq, const uint8_t *payload,
                         uint32_t plen)
{
    static uint8_t raw[70000];
    uint32_t crc;
    size_t n;
    raw[0] = type;
    raw[1] = (uint8_t)seq;
    raw[2] = (uint8_t)(seq >> 8);
    raw[3] = (uint8_t)plen;
    raw[4] = (uint8_t)(plen >> 8);
    if (plen > 0u) {
        memcpy(raw + 5, payload, plen);
    }
    crc = th_proto_crc32(0u, raw, 5u + plen);
    raw[5 + plen] = (uint8_t)crc;
    raw[6 + plen] = (uint8_t)(crc >> 8);
    raw[7 + plen] = (uint8_t)(crc >> 16);
    raw[8 + plen] = (uint8_t)(crc >> 24);
    out[0] = 0u;
    n = th_proto_cobs_encode(raw, 9u + plen, out + 1);
    out[1 + n] = 0u;
    return n + 2u;
}

static uint8_t frame_buf[80000], payload_buf[70000], decoded[70000];

static void hello_ok(feeder *fd, uint16_t seq)
{
    size_t n = make_frame(frame_buf, TH_PROTO_HELLO, seq, NULL, 0);
    feed(fd, frame_buf, n);
    CHECK(fd->cap->last_len == 14u);
    CHECK(fd->cap->last[0] == (TH_PROTO_HELLO | TH_PROTO_RESP));
    CHECK(fd->cap->last[1] == (uint8_t)seq && fd->cap->last[2] == (uint8_t)(seq >> 8));
}

static void test_vectors(void)
{
    static const char digits[] = "123456789";
    static uint8_t data[1200], enc[1300];
    int iter;
    CHECK(th_proto_crc32(0u, digits, 9) == 0xCBF43926u);
    CHECK(th_proto_crc32(0u, "", 0) == 0u);
    CHECK(th_proto_crc32(th_proto_crc32(0u, digits, 4), digits + 4, 5) == 0xCBF43926u);
    for (iter = 0; iter < 3000; iter++) {
        size_t len = rnd() % 1100u, i, n;
        uint32_t zero_every = 1u + rnd() % 400u;
        long d;
        for (i = 0; i < len; i++) {
            data[i] = (rnd() % zero_every == 0u) ? 0u : (uint8_t)(1u + rnd() % 255u);
        }
        n = th_proto_cobs_encode(data, len, enc);
        CHECK(n <= len + len / 254u + 1u);
        CHECK(memchr(enc, 0, n) == NULL);
        d = cobs_decode(enc, n, decoded);
        CHECK(d == (long)len && memcmp(decoded, data, len) == 0);
    }
}

static void test_dedupe(feeder *fd)
{
    size_t n = make_frame(frame_buf, TH_PROTO_INVOKE, 77u, NULL, 0);
    uint32_t before = fd->app->invoke_count;
    uint8_t first[64];
    feed(fd, frame_buf, n);
    CHECK(fd->cap->last[0] == (TH_PROTO_INVOKE | TH_PROTO_RESP));
    memcpy(first, fd->cap->last, 21);
    feed(fd, frame_buf, n); /* retry of the same request */
    CHECK(fd->app->invoke_count == before + 1u);
    CHECK(fd->cap->last_len == 21u && memcmp(first, fd->cap->last, 21) == 0);
    n = make_frame(frame_buf, TH_PROTO_INVOKE, 78u, NULL, 0);
    feed(fd, frame_buf, n); /* a new seq runs again */
    CHECK(fd->app->invoke_count == before + 2u);
}

static void test_random(feeder *fd, size_t total)
{
    static uint8_t chunk[4096];
    size_t done = 0;
    uint16_t seq = 1000;
    while (done < total) {
        size_t n = 1u + rnd() % sizeof chunk, i;
        uint32_t zero_every = (rnd() & 1u) ? 256u : 1u + rnd() % 2000u;
        for (i = 0; i < n; i++) {
            chunk[i] = (rnd() % zero_every == 0u) ? 0u : (uint8_t)rnd();
        }
        feed(fd, chunk, n);
        done += n;
        hello_ok(fd, seq++);
    }
}

static void test_mutations(feeder *fd, int iterations)
{
    static const uint8_t types[] = {TH_PROTO_HELLO,      TH_PROTO_INFO,       TH_PROTO_SET_INPUT,
                                    TH_PROTO_INVOKE,     TH_PROTO_GET_OUTPUT, TH_PROTO_GET_PROFILE,
                                    TH_PROTO_LOAD_MODEL, 0x00, 0x42, 0x81, 0xFF};
    int iter;
    uint16_t seq = 5000;
    for (iter = 0; iter < iterations; iter++) {
        uint8_t type = types[rnd() % sizeof types];
        uint32_t plen = rnd() % 8u == 0u ? rnd() % 1400u : rnd() % 24u, i;
        size_t n;
        for (i = 0; i < plen; i++) {
            payload_buf[i] = (uint8_t)(rnd() % 5u == 0u ? 0u : rnd());
        }
        n = make_frame(frame_buf, type, seq++, payload_buf, plen);
        switch (rnd() % 7u) {
        case 0: /* bit flip */
            frame_buf[1 + rnd() % (n - 2u)] ^= (uint8_t)(1u << (rnd() % 8u));
            break;
        case 1: /* truncate */
            n = 1u + rnd() % (n - 1u);
            break;
        case 2: { /* delete a byte */
            size_t at = 1u + rnd() % (n - 2u);
            memmove(frame_buf + at, frame_buf + at + 1, n - at - 1u);
            n--;
            break;
        }
        case 3: { /* insert a byte */
            size_t at = 1u + rnd() % (n - 1u);
            memmove(frame_buf + at + 1, frame_buf + at, n - at);
            frame_buf[at] = (uint8_t)rnd();
            n++;
            break;
        }
        case 4: /* several random bytes overwritten */
            for (i = 0; i < 4u; i++) {
                frame_buf[rnd() % n] = (uint8_t)rnd();
            }
            break;
        default: /* unmodified: answered in kind */
            break;
        }
        feed(fd, frame_buf, n);
        if (rnd() % 4u == 0u) {
            hello_ok(fd, seq++);
        }
    }
    hello_ok(fd, seq);
}

int main(int argc, char **argv)
{
    static fake_app app;
    static capture cap;
    feeder fd;
    unsigned long seed = argc > 1 ? strtoul(argv[1], NULL, 0) : 1u;
    size_t random_bytes = argc > 2 ? (size_t)strtoul(argv[2], NULL, 0) : 100000u;

    rng_state = (uint32_t)seed ? (uint32_t)seed : 1u;
    fake_app_init(&app, cap_write, &cap);
    memset(&fd, 0, sizeof fd);
    fd.app = &app;
    fd.cap = &cap;

    test_vectors();
    th_proto_send_ready(&app.proto);
    CHECK(cap.replies == 1u && cap.last[0] == TH_PROTO_READY);
    cap.replies = 0;
    hello_ok(&fd, 1u);
    test_dedupe(&fd);
    test_random(&fd, random_bytes);
    test_mutations(&fd, 20000);
    printf("fuzz seed=%lu: %u frames in, %u replies, %u rejected, %u from cache, %u failures\n",
           seed, fd.frames, cap.replies, (unsigned)app.proto.frames_bad,
           (unsigned)app.proto.replies_cached, failures);
    return failures == 0u ? 0 : 1;
}
