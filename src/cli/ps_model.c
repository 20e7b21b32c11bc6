/* ps_model.c - a model kept in the shards, and predictions through them
 * (see ps_model.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/error.h"
#include "model/model.h"
#include "net/auth.h"
#include "net/client.h"
#include "common.h"
#include "ps_model.h"

#define MAGIC "BOARPSM1"
#define HEAD_BYTES 48
/* Keys per pull: a frame of 1M keys is ~12 MB. */
#define PULL_MAX (1u << 20)

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

int ps_model_is(const char *path)
{
	char magic[8];
	FILE *f = fopen(path, "rb");
	int is = f && fread(magic, 1, 8, f) == 8 && !memcmp(magic, MAGIC, 8);
	if (f)
		fclose(f);
	return is;
}

/* The whole of a small file into *buf (malloc'ed). */
static int slurp(const char *path, uint8_t **buf, size_t *len,
		 boar_error *err)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	*buf = NULL;
	if (!f)
		return boar_fail(err, BOAR_EIO, "%s: %s", path, strerror(errno));
	int rc = 0;
	if (fstat(fileno(f), &st) || st.st_size > (off_t)1 << 30)
		rc = boar_fail(err, BOAR_ECORRUPT, "%s: not a model head",
			       path);
	else if (!(*buf = malloc((size_t)st.st_size + 1)))
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
	else if (fread(*buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		rc = boar_fail(err, BOAR_EIO, "%s: read error", path);
	*len = (size_t)st.st_size;
	fclose(f);
	if (rc) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

/* The head as boar_model_save writes it, with no hashing (a model of no
 * features and 2^B slots would not load): into *bytes. */
static int head_bytes(const char *path, const boar_model *head,
		      uint8_t **bytes, size_t *len, boar_error *err)
{
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.head.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0)
		return boar_fail(err, BOAR_EIO, "%s: %s", tmp, strerror(errno));
	close(fd);
	struct boar_model h = *head;
	h.hash_bits = 0;
	h.slot_ids = 0;
	int rc = boar_model_save(&h, tmp, err);
	if (!rc)
		rc = slurp(tmp, bytes, len, err);
	unlink(tmp);
	return rc;
}

int ps_model_write(const char *path, const boar_model *head,
		   const struct ps_model_info *info, boar_error *err)
{
	uint8_t *body, hdr[HEAD_BYTES] = { 0 };
	size_t len;
	int rc = head_bytes(path, head, &body, &len, err);
	if (rc)
		return rc;
	uint64_t weights = (info->dim + 1) * boar_model_width(head);
	uint32_t copies = info->keys > weights ? 2 : 0;
	memcpy(hdr, MAGIC, 8);
	put32(hdr + 8, copies ? 2 : 1);
	put32(hdr + 28, copies);
	put32(hdr + 12, (uint32_t)head->hash_bits);
	put32(hdr + 16, (uint32_t)head->slot_ids);
	put32(hdr + 20, info->n_workers);
	put32(hdr + 24, info->n_shards);
	put64(hdr + 32, info->dim);
	put64(hdr + 40, len);
	boar_atomic_file f;
	if (!(rc = boar_atomic_open(&f, path, err))) {
		if (fwrite(hdr, 1, sizeof hdr, f.fp) != sizeof hdr ||
		    fwrite(body, 1, len, f.fp) != len) {
			boar_atomic_abort(&f);
			rc = boar_fail(err, BOAR_EIO, "%s: write error", path);
		} else {
			rc = boar_atomic_commit(&f, err);
		}
	}
	free(body);
	return rc;
}

/* The header's fields, checked: a file is untrusted. */
static int read_info(const char *path, const uint8_t *b, size_t len,
		     struct ps_model_info *info, boar_error *err)
{
	const char *bad = NULL;
	info->hash_bits = (int)get32(b + 12);
	info->slot_ids = (int)get32(b + 16);
	info->n_workers = get32(b + 20);
	info->n_shards = get32(b + 24);
	info->dim = get64(b + 32);
	uint32_t version = get32(b + 8), copies = get32(b + 28);
	if (version != 1 && version != 2)
		bad = "version";
	else if (copies != (version == 2 ? 2u : 0u))
		bad = "copies";
	else if (info->hash_bits < 0 || info->hash_bits > 32)
		bad = "hash_bits";
	else if (info->slot_ids != 0 && info->slot_ids != 1)
		bad = "slot_ids";
	else if (!info->n_workers || info->n_workers > 65536)
		bad = "n_workers";
	else if (!info->n_shards || info->n_shards > 4096)
		bad = "n_shards";
	else if (!info->dim || info->dim > 1ull << 32 ||
		 (info->hash_bits && info->dim != 1ull << info->hash_bits))
		bad = "dim";
	else if (get64(b + 40) != len - HEAD_BYTES)
		bad = "head length";
	info->keys = copies ? copies : 1; /* times the weights, once known */
	if (bad)
		return boar_fail(err, BOAR_ECORRUPT,
				 "%s: corrupt sharded model: field %s", path,
				 bad);
	return 0;
}

int ps_model_read(const char *path, boar_model **head,
		  struct ps_model_info *info, boar_error *err)
{
	uint8_t *b;
	size_t len;
	int rc = slurp(path, &b, &len, err);
	if (rc)
		return rc;
	if (len < HEAD_BYTES || memcmp(b, MAGIC, 8)) {
		free(b);
		return boar_fail(err, BOAR_EFORMAT,
				 "%s: not a model kept in the shards", path);
	}
	if ((rc = read_info(path, b, len, info, err))) {
		free(b);
		return rc;
	}
	/* the head is an ordinary model file: loaded from memory */
	int fd = memfd_create("boar-model-head", MFD_CLOEXEC);
	char fdpath[64];
	snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
	if (fd < 0 || write(fd, b + HEAD_BYTES, len - HEAD_BYTES) !=
			      (ssize_t)(len - HEAD_BYTES))
		rc = boar_fail(err, BOAR_EIO, "%s: %s", path, strerror(errno));
	else if ((rc = boar_model_load(fdpath, head, err))) {
		char why[sizeof err->message];
		snprintf(why, sizeof why, "%s", err->message);
		boar_fail(err, rc, "%s: its model head: %s", path, why);
	}
	if (fd >= 0)
		close(fd);
	free(b);
	if (rc)
		return rc;
	if ((*head)->task != BOAR_TASK_LINEAR || (*head)->dim != 0) {
		boar_model_free(*head);
		*head = NULL;
		return boar_fail(err, BOAR_ECORRUPT,
				 "%s: corrupt sharded model: its head has "
				 "feature weights", path);
	}
	(*head)->hash_bits = info->hash_bits;
	(*head)->slot_ids = info->slot_ids;
	info->keys *= (info->dim + 1) * boar_model_width(*head);
	return 0;
}

/* Connects to the shards of where->ps as a finished worker of the model. */
static int connect_shards(const struct ps_where *where, const char *model_path,
			  const struct ps_model_info *info, uint64_t n_keys,
			  struct ps_client **c, boar_error *err)
{
	uint8_t key[NET_KEY_LEN];
	int rc;
	if (where->secret_file &&
	    (rc = net_auth_load(where->secret_file, key, err)))
		return rc;
	char *list = strdup(where->ps);
	const char *addrs[4096];
	uint32_t n = 0;
	for (char *save = NULL, *t = list ? strtok_r(list, ",", &save) : NULL;
	     t && n < 4096; t = strtok_r(NULL, ",", &save))
		addrs[n++] = t;
	if (n != info->n_shards) {
		free(list);
		return boar_fail(err, BOAR_EINVAL,
				 "--ps names %u shards, %s was trained on %u",
				 n, model_path, info->n_shards);
	}
	struct ps_client_config cfg = {
		.addrs = addrs,
		.n_shards = n,
		.rank = 0,
		.n_workers = info->n_workers,
		.dim = n_keys,
		.key = where->secret_file ? key : NULL,
		.reconnect_timeout = where->reconnect_timeout
					     ? where->reconnect_timeout
					     : 10,
	};
	rc = ps_client_connect(&cfg, c, err);
	free(list);
	return rc;
}

/* A model of fm->n features like head, its weights (and biases) pulled:
 * feature f's keys are global[f] * K + k, the biases' dim * K + k. */
static int pull_weights(struct ps_client *c, const boar_model *head,
			const struct ps_model_info *info,
			const struct feature_map *fm, boar_model **out,
			boar_error *err)
{
	uint32_t K = boar_model_width(head);
	struct boar_model *m =
		head->n_classes
			? boar_model_alloc_multiclass(head->loss, fm->n, K,
						      head->classes)
			: boar_model_alloc(BOAR_TASK_LINEAR, head->loss, fm->n,
					   0, 0, 0);
	uint64_t n = (fm->n + 1) * K;
	uint64_t *keys = malloc((n < PULL_MAX ? n : PULL_MAX) * sizeof *keys);
	if (!m || !keys) {
		boar_model_free(m);
		free(keys);
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	m->hash_bits = head->hash_bits;
	m->slot_ids = head->slot_ids;
	m->loss_param = head->loss_param;
	int rc = 0;
	for (uint64_t a = 0; a < n && !rc;) {
		uint64_t b = n - a < PULL_MAX ? n : a + PULL_MAX;
		for (uint64_t i = a; i < b; i++) {
			uint64_t f = i / K;
			keys[i - a] = (f < fm->n ? fm->global[f] : info->dim) * K +
				      i % K;
		}
		rc = ps_client_pull(c, keys, (uint32_t)(b - a), m->w + a, err);
		a = b;
	}
	free(keys);
	if (rc)
		boar_model_free(m);
	else
		*out = m;
	return rc;
}

int ps_rows_pull(const struct ps_where *where, const char *model_path,
		 const boar_model *head, const struct ps_model_info *info,
		 const boar_dataset *d, struct ps_rows *r, boar_error *err)
{
	const struct boar_dataset *ds[1] = { d };
	struct ps_client *c = NULL;
	memset(r, 0, sizeof *r);
	int rc = feature_map_build(&r->fm, info->dim, ds, 1, 0, err);
	if (rc)
		return rc;
	if (!(rc = feature_map_view(&r->fm, d, &r->view, 0, err)) &&
	    !(rc = connect_shards(where, model_path, info, info->keys, &c,
				  err)) &&
	    !(rc = pull_weights(c, head, info, &r->fm, &r->m, err)))
		rc = ps_client_done(c, err);
	ps_client_free(c);
	if (rc)
		ps_rows_free(r);
	return rc;
}

void ps_rows_free(struct ps_rows *r)
{
	boar_model_free(r->m);
	r->m = NULL;
	feature_map_view_free(&r->view);
	feature_map_free(&r->fm);
}

int ps_model_open(const char *cmd, const char *model_path,
		  const struct ps_where *where, boar_model **m,
		  struct ps_model_info *info, int *sharded)
{
	boar_error err = { 0 };
	*sharded = ps_model_is(model_path);
	if (*sharded && !where->ps)
		return cli_usage(cmd, "%s is a model kept in the shards of a "
				 "parameter server: give --ps HOST:PORT,... "
				 "(and --secret-file if they use one)",
				 model_path);
	if (!*sharded && where->ps)
		return cli_usage(cmd, "--ps: %s is a model file, not a model "
				 "kept in the shards", model_path);
	int rc = *sharded ? ps_model_read(model_path, m, info, &err)
			  : boar_model_load(model_path, m, &err);
	return rc ? cli_report(&err, rc) : 0;
}
