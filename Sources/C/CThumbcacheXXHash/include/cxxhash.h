#ifndef CXXHASH_H
#define CXXHASH_H
// thumbcache's window onto xxHash (Debian's libxxhash-dev): XXH3-128 state and updates,
// plus a guarded update over memory-mapped file bytes. Only prefixed names are exposed.
#include <stddef.h>
#include <stdint.h>

typedef struct cxxh_state cxxh_state;

/// A new XXH3-128 state, reset; NULL if out of memory.
cxxh_state *cxxh_create(void);
void cxxh_free(cxxh_state *state);
void cxxh_reset(cxxh_state *state);
void cxxh_update(cxxh_state *state, const void *bytes, size_t count);
/// The hash so far, as its high and low 64 bits.
void cxxh_digest(const cxxh_state *state, uint64_t *high, uint64_t *low);
/// XXH3-64 of bytes in memory: the hash of in-memory hash tables (short keys take a few ns).
uint64_t cxxh_hash64(const void *bytes, size_t count);
/// XXH3-128 of bytes in memory.
void cxxh_oneshot(const void *bytes, size_t count, uint64_t *high, uint64_t *low);

/// Like cxxh_update over bytes of a file mapping, but survives the file shrinking meanwhile:
/// touching a mapped page past the new end raises SIGBUS, which is caught for this thread.
/// Returns 0, or -1 if SIGBUS was raised (the state is then unusable until reset).
int cxxh_update_mapped(cxxh_state *state, const void *bytes, size_t count);

#endif
