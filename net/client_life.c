/* client_life.c - a client made (addresses parsed, buffers, not yet
 * connected: client.c connects) and freed. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "net/client_int.h"
#include "net/loop.h"

/* A debugging aid's switch: on when set to anything but "" or "0". */
static int env_on(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0");
}

/* The client of cfg, not connected yet: addresses parsed, buffers made.
 * @return 0 and *out, or an error code (*out freed). */
int client_new(const struct ps_client_config *cfg, struct ps_client **out,
	       boar_error *err)
{
	struct ps_client *c = calloc(1, sizeof *c);
	int rc;
	if (!c)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	*out = c;
	c->cfg = *cfg;
	c->wake_fd = -1;
	if (c->cfg.reconnect_timeout <= 0)
		c->cfg.reconnect_timeout = 30;
	wire_out_init(&c->out);
	if (!cfg->n_shards || !cfg->n_workers || cfg->rank >= cfg->n_workers ||
	    !cfg->dim) {
		rc = boar_fail(err, BOAR_EINVAL, "bad cluster shape");
		goto err;
	}
	if (cfg->key) {
		memcpy(c->key, cfg->key, NET_KEY_LEN);
		c->auth = 1;
	}
	c->sh = calloc(cfg->n_shards, sizeof *c->sh);
	if (!c->sh) {
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto err;
	}
	for (uint32_t i = 0; i < cfg->n_shards; i++) {
		struct shard *sh = &c->sh[i];
		const char *b = cfg->backups ? cfg->backups[i] : NULL;
		sh->fd = -1;
		if (net_split_hostport(cfg->addrs[i], sh->host, sizeof sh->host,
				       &sh->port)) {
			rc = boar_fail(err, BOAR_EINVAL,
				       "'%s' is not HOST:PORT", cfg->addrs[i]);
			goto err;
		}
		if (b && *b &&
		    net_split_hostport(b, sh->alt_host, sizeof sh->alt_host,
				       &sh->alt_port)) {
			rc = boar_fail(err, BOAR_EINVAL,
				       "backup '%s' is not HOST:PORT", b);
			goto err;
		}
		sh->has_alt = b && *b;
	}
	/* debugging aids (client.h, ps_client_push_pulled) */
	c->keyed_only = env_on("BOAR_PS_KEYED_PUSH");
	c->check_pulled = env_on("BOAR_PS_CHECK_PULLED");
	c->key_lists = env_on("BOAR_PS_KEY_LISTS");
	c->pulled = calloc(2 * (size_t)cfg->n_shards, sizeof *c->pulled);
	if (!c->pulled) {
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto err;
	}
	if (cfg->threshold > 0) {
		c->res = calloc(cfg->dim, sizeof *c->res);
		if (!c->res) {
			rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
			goto err;
		}
	}
	return 0;
err:
	ps_client_free(c);
	*out = NULL;
	return rc;
}

void ps_client_free(struct ps_client *c)
{
	if (!c)
		return;
	client_bg_stop(c);
	if (c->sh)
		for (uint32_t i = 0; i < c->cfg.n_shards; i++)
			client_drop_fd(&c->sh[i]);
	for (uint32_t i = 0; c->sh && i < c->cfg.n_shards; i++)
		free(c->sh[i].kept);
	free(c->sh);
	free(c->pulled);
	free(c->res);
	free(c->kbuf);
	free(c->vbuf);
	free(c->in);
	free(c->ahead.arg);
	free(c->ahead.pk);
	free(c->ahead.pv);
	free(c->ahead.runs);
	wire_out_free(&c->out);
	wire_msg_free(&c->msg);
	free(c);
}
