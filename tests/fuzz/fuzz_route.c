/* fuzz_route.c — fuzz target for navhost's route-file reader: any bytes give a checked route or
 * a message naming the entry and field, never a crash; a parsed route's entries are consistent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "route_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = (char *)malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    nm_route_file f;
    char why[512];
    if (nm_route_file_parse(text, &f, why, sizeof why) == 0) {
        for (size_t i = 0; i < f.n; i++) {
            const nm_rt_entry *e = &f.entries[i];
            if (e->kind == NM_RT_ZONE && (!e->zone || !e->zone[0])) abort();
            if (e->kind == NM_RT_POINT && !e->action) abort();
        }
        nm_route_file_free(&f);
    } else if (!why[0]) {
        abort(); /* a refusal always says why */
    }
    free(text);
    return 0;
}
