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
    // Drawn straight into the caller's buffer: cairo's ARGB32, which the caller straightens.
    cairo_surface_t *surface = cairo_image_surface_create_for_data(rgba, CAIRO_FORMAT_ARGB32, width, height, width * 4);
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
    cairo_surface_destroy(surface);
    return 0;
}

void csvg_close(csvg_document *document) {
    if (!document) return;
    g_object_unref(document->handle);
    g_free(document);
}
