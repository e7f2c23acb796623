#include "carchive.h"

// libarchive is loaded with dlopen at the first archive, not linked: with its libraries (libxml2,
// ICU, nettle…) it took about 0.9 ms of every documents worker's start, and a PDF never needs it.
// A confined worker may still load it then: Landlock lets it read the system's libraries
// (Sources/C/CThumbcacheSandbox, SECURITY.md).
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tc_libraries.h"

#define ARCHIVE_FUNCTIONS(X)                                                                                   \
    X(archive_read_new) X(archive_read_support_format_zip) X(archive_read_support_format_rar)                  \
    X(archive_read_support_format_rar5) X(archive_read_support_format_7zip) X(archive_read_support_format_tar) \
    X(archive_read_open_memory) X(archive_error_string) X(archive_read_free) X(archive_read_next_header)      \
    X(archive_read_data) X(archive_entry_pathname) X(archive_entry_filetype) X(archive_entry_size)            \
    X(archive_entry_size_is_set)

/// The functions used, each field named as the headers name the function.
static struct { ARCHIVE_FUNCTIONS(TC_LIBRARY_FIELD) } lib;
static const char *const names[] = {ARCHIVE_FUNCTIONS(TC_LIBRARY_NAME)};
static tc_library library = TC_LIBRARY("libarchive", "libarchive.so.13", "libarchive13", names, lib);

const char *carchive_load(void) { return tc_library_load(&library); }

static void say(char *message, size_t size, const char *text) {
    if (message && size) snprintf(message, size, "%s", text);
}

// The formats documents and comics come in; no filters (a compressed tar is not a comic).
static struct archive *open_memory(const uint8_t *bytes, size_t length, char *message, size_t message_size) {
    const char *unloaded = carchive_load();
    if (unloaded) {
        say(message, message_size, unloaded);
        return NULL;
    }
    struct archive *a = lib.archive_read_new();
    if (!a) {
        say(message, message_size, "out of memory");
        return NULL;
    }
    lib.archive_read_support_format_zip(a);
    lib.archive_read_support_format_rar(a);
    lib.archive_read_support_format_rar5(a);
    lib.archive_read_support_format_7zip(a);
    lib.archive_read_support_format_tar(a);
    if (lib.archive_read_open_memory(a, bytes, length) != ARCHIVE_OK) {
        say(message, message_size, lib.archive_error_string(a) ? lib.archive_error_string(a) : "not an archive libarchive reads");
        lib.archive_read_free(a);
        return NULL;
    }
    return a;
}

void carchive_free(void *pointer) { free(pointer); }

// The next regular file's header: 1; 0 at the end; -1 with a message when the archive is damaged.
static int next_file(struct archive *a, struct archive_entry **entry, char *message, size_t message_size) {
    for (;;) {
        int r = lib.archive_read_next_header(a, entry);
        if (r == ARCHIVE_EOF) return 0;
        if (r < ARCHIVE_WARN) {
            say(message, message_size, lib.archive_error_string(a) ? lib.archive_error_string(a) : "the archive is damaged");
            return -1;
        }
        if (lib.archive_entry_pathname(*entry) && lib.archive_entry_filetype(*entry) == AE_IFREG) return 1;
    }
}

int carchive_list(const uint8_t *bytes, size_t length, int max_entries, char **names, size_t *names_length,
                  char *message, size_t message_size) {
    *names = NULL;
    *names_length = 0;
    struct archive *a = open_memory(bytes, length, message, message_size);
    if (!a) return -1;
    size_t capacity = 4096, used = 0;
    char *out = malloc(capacity);
    int count = 0, status = 0;
    struct archive_entry *entry;
    while (out && count < max_entries && (status = next_file(a, &entry, message, message_size)) > 0) {
        const char *name = lib.archive_entry_pathname(entry);
        size_t n = strlen(name) + 1;
        if (used + n > capacity) {
            while (used + n > capacity) capacity *= 2;
            char *grown = realloc(out, capacity);
            if (!grown) break;
            out = grown;
        }
        memcpy(out + used, name, n);
        used += n;
        count++;
    }
    lib.archive_read_free(a);
    if (!out) {
        say(message, message_size, "out of memory");
        return -1;
    }
    if (status < 0 && count == 0) {
        free(out);
        return -1;
    }
    *names = out;
    *names_length = used;
    return count;
}

int carchive_read(const uint8_t *bytes, size_t length, const char *name, size_t cap, uint8_t **data, size_t *data_length,
                  char *message, size_t message_size) {
    *data = NULL;
    *data_length = 0;
    struct archive *a = open_memory(bytes, length, message, message_size);
    if (!a) return -1;
    struct archive_entry *entry;
    int result = 1, found;
    while ((found = next_file(a, &entry, message, message_size)) != 0) {
        if (found < 0) {
            result = -1;
            break;
        }
        if (strcmp(lib.archive_entry_pathname(entry), name) != 0) continue;
        // What the header claims is checked first; what is decompressed is capped regardless.
        if (lib.archive_entry_size_is_set(entry) && lib.archive_entry_size(entry) > (la_int64_t)cap) {
            result = 2;
            break;
        }
        size_t capacity = lib.archive_entry_size_is_set(entry) && lib.archive_entry_size(entry) > 0 ? (size_t)lib.archive_entry_size(entry) : 65536;
        uint8_t *out = malloc(capacity + 1);
        size_t used = 0;
        result = 0;
        while (out) {
            if (used == capacity) {
                if (capacity >= cap) {
                    result = 2;
                    break;
                }
                capacity = capacity * 2 > cap ? cap : capacity * 2;
                uint8_t *grown = realloc(out, capacity + 1);
                if (!grown) break;
                out = grown;
            }
            la_ssize_t n = lib.archive_read_data(a, out + used, capacity - used);
            if (n == 0) break;
            if (n < 0) {
                say(message, message_size, lib.archive_error_string(a) ? lib.archive_error_string(a) : "the entry is damaged");
                result = -1;
                break;
            }
            used += (size_t)n;
        }
        if (!out) {
            say(message, message_size, "out of memory");
            result = -1;
        } else if (result == 0) {
            out[used] = 0;  // a terminator, so XML can be scanned as a C string
            *data = out;
            *data_length = used;
            out = NULL;
        }
        free(out);
        break;
    }
    lib.archive_read_free(a);
    return result;
}
