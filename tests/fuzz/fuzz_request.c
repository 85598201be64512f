/* fuzz_request.c — fuzz target for the plugin's JSON request reader (输入与输出): any bytes must
 * give a parsed request or an error message, never a crash; a parsed request must pass or fail
 * the struct checks cleanly, and the result JSON of an error must itself parse. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "plugin_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = (char *)malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    nm_plugin_request q;
    nm_plugin_disc *discs = NULL;
    if (nm_plugin_parse_request(text, "demo", &q, &discs) == NM_OK) {
        (void)nm_plugin_check_request(&q);
        nm_free(discs);
    } else {
        char *e = nm_plugin_error_json("bad_request", nm_plugin_last_error());
        cJSON *o = e ? cJSON_Parse(e) : NULL;
        if (e && !o) abort(); /* the error answer must be valid JSON */
        cJSON_Delete(o);
        nm_plugin_string_free(e);
    }
    free(text);
    return 0;
}
