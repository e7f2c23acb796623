// libFuzzer harness for the TIFF shim (Sources/CTIFF): its page choice, its float and 16-bit
// CMYK conversion from stored strips and tiles, and the bands it hands out. C, built by
// Tools/fuzz with clang straight from the shim's source: the Swift module around it links only
// into the workers, never into a product the fuzz package could depend on.
//
// The input is a file on a memfd, as the worker gets a descriptor. The same checks as
// TIFFSource and the thumbnailer's limits come first, so the harness never asks for more
// memory than a worker would allow.
#define _GNU_SOURCE
#include "ctiff.h"
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = memfd_create("fuzz-tiff", MFD_CLOEXEC);
    if (fd < 0) return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char message[256];
    ctiff_info info;
    ctiff_decoder *decoder = ctiff_open_fd(fd, &info, message, sizeof message);
    if (decoder) {
        uint32_t width = 0, height = 0, rows = 0;
        // A quarter of the stored size: a reduced-resolution copy is chosen when one is that big.
        if ((uint64_t)info.width * info.height <= (1u << 24) &&
            ctiff_select(decoder, info.width / 4, info.height / 4, &width, &height, &rows) == 0 && width > 0 && height > 0 &&
            (uint64_t)width * height <= (1u << 24) && ctiff_begin(decoder) == 0) {
            if (rows == 0) rows = 1;
            if (rows > height) rows = height;
            uint32_t *band = (uint64_t)width * rows * 4 <= (64u << 20) ? malloc((size_t)width * rows * 4) : NULL;
            for (uint32_t y = 0; band && y < height; y += rows) {
                uint32_t n = height - y < rows ? height - y : rows;
                if (ctiff_read_band(decoder, y, n, band) != 0) break;
            }
            free(band);
        }
        (void)ctiff_message(decoder);
        ctiff_close(decoder);
    }
    close(fd);
    return 0;
}
