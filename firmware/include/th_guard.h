/*
 * th_guard.h - guard bytes after the model's arena, in debug builds (-DTH_DEBUG_GUARDS=1).
 *
 * A backend allocates TH_GUARD_BYTES more than its arena, fills them once (th_guard_set) and
 * checks them after every invoke (th_guard_ok): a kernel that wrote past the tensors the
 * plan gave it changes them, and the invoke fails with TH_MODEL_DETAIL_ARENA_GUARD instead of
 * corrupting what lies beyond. Release builds have no guard bytes and no check.
 */
#ifndef TH_GUARD_H
#define TH_GUARD_H

#include <stdint.h>

#ifndef TH_DEBUG_GUARDS
#define TH_DEBUG_GUARDS 0
#endif

#define TH_GUARD_BYTES (TH_DEBUG_GUARDS ? 32u : 0u)
#define TH_GUARD_BYTE(k) ((uint8_t)(0xA5u ^ (uint8_t)(k)))

static inline void th_guard_set(uint8_t *guard)
{
#if TH_DEBUG_GUARDS
    for (uint32_t k = 0; k < TH_GUARD_BYTES; k++) {
        guard[k] = TH_GUARD_BYTE(k);
    }
#else
    (void)guard;
#endif
}

static inline int th_guard_ok(const uint8_t *guard)
{
#if TH_DEBUG_GUARDS
    for (uint32_t k = 0; k < TH_GUARD_BYTES; k++) {
        if (guard[k] != TH_GUARD_BYTE(k)) {
            return 0;
        }
    }
#else
    (void)guard;
#endif
    return 1;
}

#endif /* TH_GUARD_H */
