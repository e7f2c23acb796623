#ifndef CARCHIVE_H
#define CARCHIVE_H
#include <stddef.h>
#include <stdint.h>

// libarchive behind a narrow C interface: an archive read from memory (ZIP, RAR, 7-Zip, tar),
// its entries listed and one read by name into memory, never onto a disk.

/// The names of the archive's regular files, NUL-separated, in archive order, into `*names`
/// (malloc'd; free with carchive_free), at most `max_entries`. Returns how many, or -1 with a
/// message when libarchive cannot read the archive.
int carchive_list(const uint8_t *bytes, size_t length, int max_entries, char **names, size_t *names_length,
                  char *message, size_t message_size);

/// Reads the first regular file named `name` into `*data` (malloc'd; free with carchive_free).
/// 0: read; 1: no such entry; 2: the entry holds more than `cap` bytes (nothing more is
/// decompressed); -1: a read error, with a message.
int carchive_read(const uint8_t *bytes, size_t length, const char *name, size_t cap, uint8_t **data, size_t *data_length,
                  char *message, size_t message_size);

void carchive_free(void *pointer);

/// Loads libarchive if it is not yet loaded: NULL, or why it cannot be. The functions above load
/// it themselves; a worker whose confinement would not let it load later calls this before.
const char *carchive_load(void);

#endif
