#ifndef CDAV1D_H
#define CDAV1D_H
// dav1d's interface, its library loaded on first use: each function here is dav1d's of the same
// name after `dav1d_`, called through the loaded library.
#include <dav1d/dav1d.h>

/// Loads dav1d if it is not yet loaded: NULL, or why it cannot be. cdav1d_open loads it itself
/// (and says it could not start); a worker whose confinement would not let it load later calls
/// this before.
const char *cdav1d_load(void);

/// dav1d's defaults, or nothing changed where it cannot be loaded (cdav1d_open then fails).
void cdav1d_default_settings(Dav1dSettings *settings);
/// -1 when dav1d cannot be loaded, else dav1d_open's result.
int cdav1d_open(Dav1dContext **context, const Dav1dSettings *settings);
void cdav1d_close(Dav1dContext **context);
void cdav1d_flush(Dav1dContext *context);
uint8_t *cdav1d_data_create(Dav1dData *data, size_t size);
void cdav1d_data_unref(Dav1dData *data);
int cdav1d_send_data(Dav1dContext *context, Dav1dData *data);
int cdav1d_get_picture(Dav1dContext *context, Dav1dPicture *picture);
void cdav1d_picture_unref(Dav1dPicture *picture);

#endif
