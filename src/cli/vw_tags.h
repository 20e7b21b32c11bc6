/* vw_tags.h - the tags of Vowpal Wabbit rows, for `boar predict` to print
 * beside each prediction as VW does ("0.83 tag").
 *
 * The tag is the part of a row before its first '|' that is a token
 * starting with '\'' (the quote dropped), or a token written right against
 * the '|' after the label ("1 t|f") or with no label ("t|f"): the same
 * rule the library's VW parser skips tags by.
 */
#ifndef BOAR_CLI_VW_TAGS_H
#define BOAR_CLI_VW_TAGS_H

#include <stddef.h>

/* The tag of line [s, s+len) in [*tag, *tag + *tag_len); *tag_len 0 when
 * the row has none. @return 0 for a blank line (no row), else 1. */
int vw_tag(const char *s, size_t len, const char **tag, size_t *tag_len);

/* Every row's tag in file `path` (plain or gzip), in row order: a
 * malloc'd array of *n malloc'd strings ("" for none). @return 0, or -1
 * with errno set. */
int vw_tags_read(const char *path, char ***tags, size_t *n);
void vw_tags_free(char **tags, size_t n);

#endif
