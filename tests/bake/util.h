/* util.h — helpers shared by the bake tests: temporary folders and files, baking OBJ text with a
 * zone.json text into memory, and a table-by-table comparison of two packs. */
#ifndef NM_TESTS_BAKE_UTIL_H
#define NM_TESTS_BAKE_UTIL_H

#include "bake.h"

/* A fresh folder under /tmp (removed by tmp_remove). */
char *tmp_dir(void);
void tmp_remove(const char *dir);
/* Writes text to dir/name; returns the malloc'ed path. */
char *write_text(const char *dir, const char *name, const char *text);
/* Bakes OBJ text + zone.json text (NULL = defaults, zone "demo") into *out. Returns the status;
 * the error message goes to err. */
int bake_text(const char *obj, const char *zone_json, bool as_is, int workers, nm_pack *out, nm_error *err);
/* Asserts (Criterion) that every decoded table of `got` equals `want`. */
void expect_same_pack(const nm_pack *want, const nm_pack *got);
/* Asserts the structural invariants of a baked pack: neighbours symmetric and matching shared
 * edges, links = every (t, neighbour) sorted, components connected, BSRF flags 1 << area. */
void expect_pack_invariants(const nm_pack *p);
/* The shared data folder (NM_SHARED_DATA) when it exists, else NULL. */
const char *shared_data(void);
/* NM_SOURCE_ROOT (falls back to ".") */
const char *source_root(void);

#endif
