/* replay_main.c — runs a libFuzzer target without libFuzzer: on every file (or every file of a
 * directory) named on the command line, or on a few built-in inputs when none is given. Used by
 * the 'fuzz' test suite to replay the seed corpus under the normal (or ASan) build. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf) return 1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    printf("replayed %s (%zu bytes)\n", path, n);
    return 0;
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "no such input %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) return run_file(path);
    DIR *d = opendir(path);
    if (!d) return 1;
    int bad = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        bad |= run_path(full);
    }
    closedir(d);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        static const uint8_t hdr[80] = {'B', 'N', 'A', 'V', 5, 0};
        LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
        LLVMFuzzerTestOneInput((const uint8_t *)"BNAV", 4);
        LLVMFuzzerTestOneInput(hdr, sizeof hdr);
        puts("replayed 3 built-in inputs");
        return 0;
    }
    int bad = 0;
    for (int i = 1; i < argc; i++) bad |= run_path(argv[i]);
    return bad;
}
