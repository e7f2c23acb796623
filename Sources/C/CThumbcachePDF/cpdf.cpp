#include "cpdf.h"
#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-image.h>
#include <poppler/cpp/poppler-page-renderer.h>
#include <poppler/cpp/poppler-page.h>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

// poppler's C++ binding is loaded at the first PDF (cpdf_load, cpdf_load.c), not linked: it brings 19 libraries
// a worker drawing text or fonts never needs. C++ functions cannot be looked up into a table as
// the C libraries loaded later are, so the ones called here are weak references that the lazy
// binding resolves at their first call, from the library loaded into the global scope.
asm(".weak _ZN7poppler13page_renderer15set_paper_colorEj");
asm(".weak _ZN7poppler13page_renderer15set_render_hintENS0_11render_hintEb");
asm(".weak _ZN7poppler13page_renderer16set_image_formatENS_5image11format_enumE");
asm(".weak _ZN7poppler13page_rendererC1Ev");
asm(".weak _ZN7poppler13page_rendererD1Ev");
asm(".weak _ZN7poppler4pageD1Ev");
asm(".weak _ZN7poppler5imageD1Ev");
asm(".weak _ZN7poppler7ustringD1Ev");
asm(".weak _ZN7poppler8document18load_from_raw_dataEPKciRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESA_");
asm(".weak _ZN7poppler8documentD1Ev");
asm(".weak _ZNK7poppler13page_renderer11render_pageEPKNS_4pageEddiiiiNS_13rotation_enumE");
asm(".weak _ZNK7poppler4page11orientationEv");
asm(".weak _ZNK7poppler4page4textERKNS_9rectangleIdEENS0_16text_layout_enumE");
asm(".weak _ZNK7poppler4page9page_rectENS_13page_box_enumE");
asm(".weak _ZNK7poppler5image10const_dataEv");
asm(".weak _ZNK7poppler5image13bytes_per_rowEv");
asm(".weak _ZNK7poppler5image5widthEv");
asm(".weak _ZNK7poppler5image6formatEv");
asm(".weak _ZNK7poppler5image6heightEv");
asm(".weak _ZNK7poppler5image8is_validEv");
asm(".weak _ZNK7poppler8document11create_pageEi");
asm(".weak _ZNK7poppler8document5pagesEv");
asm(".weak _ZNK7poppler8document8info_keyERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
asm(".weak _ZNK7poppler8document9is_lockedEv");

// poppler's C++ binding renders with Splash, as pdftoppm does (the reference users compare
// with); its GLib binding draws through cairo. No C++ exception may reach Swift: every entry
// point catches them.

struct cpdf_document {
    std::unique_ptr<poppler::document> document;
    std::unique_ptr<poppler::page> page;
    double width = 0, height = 0;  // the chosen page's, as cpdf_info says
    char *title = nullptr, *author = nullptr, *creator = nullptr;
};

static void say(char *message, size_t size, const char *text) {
    if (message && size) snprintf(message, size, "%s", text);
}

void cpdf_close(cpdf_document *d) {
    if (!d) return;
    free(d->title);
    free(d->author);
    free(d->creator);
    delete d;
}

// UTF-16 code units as UTF-8, appended to `out`. Converted here, not by ustring::to_utf8: that
// calls iconv, which opens glibc's gconv files, and the sandboxed worker may not.
static void append_utf8(std::string &out, const poppler::ustring &units) {
    for (size_t i = 0; i < units.size(); i++) {
        uint32_t c = units[i];
        if (c >= 0xd800 && c < 0xdc00 && i + 1 < units.size() && units[i + 1] >= 0xdc00 && units[i + 1] < 0xe000) {
            c = 0x10000 + ((c - 0xd800) << 10) + (units[++i] - 0xdc00);
        } else if (c >= 0xd800 && c < 0xe000) {
            c = 0xfffd;  // a lone surrogate
        }
        if (c == 0) continue;
        if (c < 0x80) {
            out += char(c);
        } else if (c < 0x800) {
            out += char(0xc0 | (c >> 6));
            out += char(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            out += char(0xe0 | (c >> 12));
            out += char(0x80 | ((c >> 6) & 0x3f));
            out += char(0x80 | (c & 0x3f));
        } else {
            out += char(0xf0 | (c >> 18));
            out += char(0x80 | ((c >> 12) & 0x3f));
            out += char(0x80 | ((c >> 6) & 0x3f));
            out += char(0x80 | (c & 0x3f));
        }
    }
}

// A document property as UTF-8, or NULL when empty.
static char *property(poppler::document &document, const char *key) {
    std::string out;
    append_utf8(out, document.info_key(key));
    return out.empty() ? nullptr : strdup(out.c_str());
}

// Splash's page size: the crop box, its sides swapped by a quarter-turn /Rotate.
static void page_size(poppler::page &page, double *width, double *height) {
    poppler::rectf box = page.page_rect(poppler::crop_box);
    bool turned = page.orientation() == poppler::page::landscape || page.orientation() == poppler::page::seascape;
    *width = turned ? box.height() : box.width();
    *height = turned ? box.width() : box.height();
}

cpdf_document *cpdf_open(const uint8_t *bytes, size_t length, int page, cpdf_info *info, char *message, size_t message_size) {
    memset(info, 0, sizeof *info);
    if (cpdf_load(message, message_size) != 0) return nullptr;
    try {
        if (length > INT_MAX) {
            say(message, message_size, "larger than the 2 GiB poppler reads from memory");
            return nullptr;
        }
        auto d = std::make_unique<cpdf_document>();
        // Borrowed, not copied: the caller's mapping outlives the document.
        d->document.reset(poppler::document::load_from_raw_data(reinterpret_cast<const char *>(bytes), int(length)));
        if (!d->document) {
            say(message, message_size, "not a PDF document poppler reads");
            return nullptr;
        }
        if (d->document->is_locked()) {
            say(message, message_size, "the document is encrypted");
            return nullptr;
        }
        info->pages = d->document->pages();
        if (page < 0 || (info->pages > 0 && page >= info->pages)) {
            say(message, message_size, "no such page");
            return nullptr;
        }
        if (info->pages > 0) d->page.reset(d->document->create_page(page));
        if (!d->page) {
            say(message, message_size, "the document has no readable page");
            return nullptr;
        }
        page_size(*d->page, &d->width, &d->height);
        info->width = d->width;
        info->height = d->height;
        info->title = d->title = property(*d->document, "Title");
        info->author = d->author = property(*d->document, "Author");
        info->creator = d->creator = property(*d->document, "Creator");
        return d.release();
    } catch (const std::exception &e) {
        say(message, message_size, e.what());
    } catch (...) {
        say(message, message_size, "poppler failed");
    }
    return nullptr;
}

int cpdf_render(cpdf_document *d, int width, int height, uint8_t *rgba, char *message, size_t message_size) {
    try {
        double pw = d->width, ph = d->height;
        if (!(pw > 0 && ph > 0)) {
            say(message, message_size, "the page has no size");
            return -1;
        }
        // pdftoppm's defaults: anti-aliased text and shapes, no hinting, white paper.
        poppler::page_renderer renderer;
        renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
        renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
        renderer.set_paper_color(0xffffffff);
        renderer.set_image_format(poppler::image::format_argb32);
        // Drawn once at the size asked for: the resolution that maps the page onto the pixels.
        poppler::image image = renderer.render_page(d->page.get(), 72.0 * width / pw, 72.0 * height / ph, 0, 0, width, height);
        if (!image.is_valid() || image.format() != poppler::image::format_argb32) {
            say(message, message_size, "poppler could not draw the page");
            return -1;
        }
        // Splash's ARGB32 rows (native-endian words, like cairo's) into the caller's rows; a
        // slice poppler made smaller stays white.
        if (image.width() < width || image.height() < height) memset(rgba, 0xff, size_t(width) * size_t(height) * 4);
        const char *data = image.const_data();
        int rows = image.height() < height ? image.height() : height;
        size_t row = size_t(image.width() < width ? image.width() : width) * 4;
        for (int y = 0; y < rows; y++) memcpy(rgba + size_t(y) * size_t(width) * 4, data + size_t(y) * size_t(image.bytes_per_row()), row);
        return 0;
    } catch (const std::exception &e) {
        say(message, message_size, e.what());
    } catch (...) {
        say(message, message_size, "poppler failed");
    }
    return -1;
}

long cpdf_text(cpdf_document *d, char *out, size_t size, char *message, size_t message_size) {
    try {
        std::string text;
        int pages = d->document->pages();
        // Reading order (poppler's non-raw, non-physical layout), a page at a time until the cap.
        for (int i = 0; i < pages && text.size() < size; i++) {
            std::unique_ptr<poppler::page> page(d->document->create_page(i));
            if (!page) continue;
            if (!text.empty()) text += '\f';
            append_utf8(text, page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout));
        }
        size_t n = text.size() < size ? text.size() : size;
        while (n > 0 && n < text.size() && (static_cast<unsigned char>(text[n]) & 0xc0) == 0x80) n--;  // a character's end
        memcpy(out, text.data(), n);
        return long(n);
    } catch (const std::exception &e) {
        say(message, message_size, e.what());
    } catch (...) {
        say(message, message_size, "poppler failed while reading the text");
    }
    return -1;
}
