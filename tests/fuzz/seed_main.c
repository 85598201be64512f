/* seed_main.c — main of the gen_<t>_seed tools: `gen_<t>_seed --write-seed FILE` writes the seed
 * input the target's fuzz_seed builds (the targets' corpora in tests/gridio/corpus/<t>). */
#include <stdio.h>
#include <string.h>

#include "codec/codec.h"

int fuzz_seed(nm_buf *out, nm_error *e);

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "--write-seed") != 0) {
        fprintf(stderr, "usage: %s --write-seed FILE\n", argv[0]);
        return 2;
    }
    nm_buf b = {0};
    nm_error e;
    if (fuzz_seed(&b, &e) != NM_OK) {
        fprintf(stderr, "seed: %s\n", e.msg);
        return 1;
    }
    FILE *f = fopen(argv[2], "wb");
    int bad = !f || fwrite(b.p, 1, b.size, f) != b.size;
    if (f && fclose(f) != 0) bad = 1;
    nm_buf_free(&b);
    return bad;
}
