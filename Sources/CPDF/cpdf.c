#include "cpdf.h"
#include <cairo.h>
#include <poppler.h>
#include <stdio.h>
#include <string.h>

struct cpdf_document {
    GBytes *bytes;
    PopplerDocument *document;
    PopplerPage *page;
    char *title, *author, *creator;
};

static void say(char *message, size_t size, const char *text) {
    if (message && size) snprintf(message, size, "%s", text);
}

void cpdf_close(cpdf_document *d) {
    if (!d) return;
    if (d->page) g_object_unref(d->page);
    if (d->document) g_object_unref(d->document);
    if (d->bytes) g_bytes_unref(d->bytes);
    g_free(d->title);
    g_free(d->author);
    g_free(d->creator);
    g_free(d);
}

// Document properties can hold anything: empty ones are dropped.
static char *text(char *value) {
    if (value && !value[0]) {
        g_free(value);
        return NULL;
    }
    return value;
}

cpdf_document *cpdf_open(const uint8_t *bytes, size_t length, cpdf_info *info, char *message, size_t message_size) {
    memset(info, 0, sizeof *info);
    cpdf_document *d = g_new0(cpdf_document, 1);
    // Borrowed, not copied: the caller's mapping outlives the document.
    d->bytes = g_bytes_new_static(bytes, length);
    GError *error = NULL;
    d->document = poppler_document_new_from_bytes(d->bytes, NULL, &error);
    if (!d->document) {
        say(message, message_size, error && error->message ? error->message : "not a PDF document poppler reads");
        if (error) g_error_free(error);
        cpdf_close(d);
        return NULL;
    }
    info->pages = poppler_document_get_n_pages(d->document);
    d->page = info->pages > 0 ? poppler_document_get_page(d->document, 0) : NULL;
    if (!d->page) {
        say(message, message_size, "the document has no readable page");
        cpdf_close(d);
        return NULL;
    }
    poppler_page_get_size(d->page, &info->width, &info->height);
    info->title = d->title = text(poppler_document_get_title(d->document));
    info->author = d->author = text(poppler_document_get_author(d->document));
    info->creator = d->creator = text(poppler_document_get_creator(d->document));
    return d;
}

int cpdf_render(cpdf_document *d, int width, int height, uint8_t *rgba, char *message, size_t message_size) {
    double pw = 0, ph = 0;
    poppler_page_get_size(d->page, &pw, &ph);
    if (!(pw > 0 && ph > 0)) {
        say(message, message_size, "the first page has no size");
        return -1;
    }
    // Drawn straight into the caller's buffer: cairo's ARGB32, which the caller straightens.
    cairo_surface_t *surface = cairo_image_surface_create_for_data(rgba, CAIRO_FORMAT_ARGB32, width, height, width * 4);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        say(message, message_size, "cannot make a canvas that size");
        cairo_surface_destroy(surface);
        return -1;
    }
    cairo_t *cr = cairo_create(surface);
    // Pages are drawn on paper: white first, as a viewer shows them.
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_scale(cr, width / pw, height / ph);
    poppler_page_render(d->page, cr);
    cairo_status_t status = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_flush(surface);
    if (status != CAIRO_STATUS_SUCCESS) {
        say(message, message_size, cairo_status_to_string(status));
        cairo_surface_destroy(surface);
        return -1;
    }
    cairo_surface_destroy(surface);
    return 0;
}
