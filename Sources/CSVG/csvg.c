#include "csvg.h"
#include <cairo.h>
#include <librsvg/rsvg.h>
#include <stdio.h>
#include <string.h>

struct csvg_document {
    RsvgHandle *handle;
};

static void take_error(GError *error, char *message, size_t size, const char *fallback) {
    if (message && size) snprintf(message, size, "%s", error && error->message ? error->message : fallback);
    if (error) g_error_free(error);
}

csvg_document *csvg_open(const uint8_t *bytes, size_t length, double *width, double *height, char *message, size_t message_size) {
    GError *error = NULL;
    // Default flags keep librsvg's limits (element count, nesting, text size).
    RsvgHandle *handle = rsvg_handle_new_from_data(bytes, length, &error);
    if (!handle) {
        take_error(error, message, message_size, "not a readable SVG document");
        return NULL;
    }
    *width = *height = 0;
    if (!rsvg_handle_get_intrinsic_size_in_pixels(handle, width, height)) {
        gboolean has_viewbox = FALSE;
        RsvgRectangle viewbox;
        rsvg_handle_get_intrinsic_dimensions(handle, NULL, NULL, NULL, NULL, &has_viewbox, &viewbox);
        if (has_viewbox) {
            *width = viewbox.width;
            *height = viewbox.height;
        }
    }
    csvg_document *document = g_new0(csvg_document, 1);
    document->handle = handle;
    return document;
}

int csvg_render(csvg_document *document, int width, int height, uint8_t *rgba, char *message, size_t message_size) {
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        if (message && message_size) snprintf(message, message_size, "cannot make a %dx%d canvas", width, height);
        cairo_surface_destroy(surface);
        return -1;
    }
    cairo_t *cr = cairo_create(surface);
    RsvgRectangle viewport = {0, 0, width, height};
    GError *error = NULL;
    gboolean ok = rsvg_handle_render_document(document->handle, cr, &viewport, &error);
    cairo_destroy(cr);
    if (!ok) {
        take_error(error, message, message_size, "cannot render the SVG document");
        cairo_surface_destroy(surface);
        return -1;
    }
    cairo_surface_flush(surface);
    // cairo's ARGB32 is premultiplied, native-endian 32-bit: straighten into RGBA bytes.
    const uint8_t *data = cairo_image_surface_get_data(surface);
    int stride = cairo_image_surface_get_stride(surface);
    for (int y = 0; y < height; y++) {
        const uint32_t *row = (const uint32_t *)(data + (size_t)y * stride);
        uint8_t *out = rgba + (size_t)y * width * 4;
        for (int x = 0; x < width; x++) {
            uint32_t p = row[x];
            uint32_t a = p >> 24, r = (p >> 16) & 0xff, g = (p >> 8) & 0xff, b = p & 0xff;
            if (a != 0 && a != 255) {
                r = (r * 255 + a / 2) / a;
                g = (g * 255 + a / 2) / a;
                b = (b * 255 + a / 2) / a;
            }
            out[x * 4] = (uint8_t)(r > 255 ? 255 : r);
            out[x * 4 + 1] = (uint8_t)(g > 255 ? 255 : g);
            out[x * 4 + 2] = (uint8_t)(b > 255 ? 255 : b);
            out[x * 4 + 3] = (uint8_t)a;
        }
    }
    cairo_surface_destroy(surface);
    return 0;
}

void csvg_close(csvg_document *document) {
    if (!document) return;
    g_object_unref(document->handle);
    g_free(document);
}
