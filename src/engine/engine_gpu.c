/* engine_gpu.c - the CUDA engine, opened as a plugin at device = GPU.
 *
 * The CUDA engine (gpu/) is built into its own shared object,
 * libboar-gpu.so.N, which alone links cudart. libboar opens it with dlopen
 * the first time a run asks for the GPU, so a program that trains on the
 * CPU never loads (or needs) the CUDA runtime, and one libboar serves
 * machines with and without a GPU. Where it looks, in order:
 *  1. o->gpu_plugin, when the caller names a file;
 *  2. beside the object that holds this code (libboar.so, or the program
 *     that linked libboar.a), and in ../lib from there (bin/ -> lib/);
 *  3. the libdir libboar was installed to (BOAR_LIBDIR, from the Makefile);
 *  4. the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache).
 * A plugin is never closed: the CUDA runtime cannot be unloaded safely, and
 * dlopen of a loaded object only counts a reference, so nothing is kept in
 * a global here. When nothing opens, the answer is BOAR_ENOGPU with what
 * was tried: the no-GPU stub.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_ops.h"
#include "base/error.h"

#ifndef BOAR_LIBDIR
#define BOAR_LIBDIR "/usr/local/lib"
#endif

/* Opens path and takes its ops; 0, or -1 with why[] filled. */
static int try_open(const char *path, const struct boar_engine_ops **ops,
		    char *why, size_t n)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(why, n, "%.300s", e ? e : path);
		return -1;
	}
	boar_gpu_plugin_fn entry;
	*(void **)&entry = dlsym(h, BOAR_GPU_PLUGIN_SYMBOL);
	const struct boar_engine_ops *o = entry ? entry(BOAR_ENGINE_ABI) : NULL;
	if (!o || o->abi != BOAR_ENGINE_ABI) {
		snprintf(why, n, "%.260s: not a GPU engine of this libboar", path);
		return -1;
	}
	*ops = o;
	return 0;
}

/* Where this code was loaded from, as a directory ("" if unknown). */
static void own_dir(char *dir, size_t n)
{
	Dl_info info;
	dir[0] = '\0';
	if (!dladdr((void *)own_dir, &info) || !info.dli_fname)
		return;
	const char *slash = strrchr(info.dli_fname, '/');
	if (slash)
		snprintf(dir, n, "%.*s", (int)(slash - info.dli_fname),
			 info.dli_fname);
}

static int open_gpu(const boar_options *o, const struct boar_engine_ops **ops,
		    boar_error *err)
{
	char why[4][320], dir[1024], path[4][1100];
	int n = 0;
	if (o->gpu_plugin) {
		if (!try_open(o->gpu_plugin, ops, why[0], sizeof why[0]))
			return 0;
		return boar_fail(err, BOAR_ENOGPU,
				 "gpu_plugin %s does not open: %s",
				 o->gpu_plugin, why[0]);
	}
	own_dir(dir, sizeof dir);
	if (dir[0]) {
		snprintf(path[n++], sizeof path[0], "%s/%s", dir,
			 BOAR_GPU_PLUGIN_NAME);
		snprintf(path[n++], sizeof path[0], "%s/../lib/%s", dir,
			 BOAR_GPU_PLUGIN_NAME);
	}
	snprintf(path[n++], sizeof path[0], "%s/%s", BOAR_LIBDIR,
		 BOAR_GPU_PLUGIN_NAME);
	snprintf(path[n++], sizeof path[0], "%s", BOAR_GPU_PLUGIN_NAME);
	for (int i = 0; i < n; i++)
		if (!try_open(path[i], ops, why[i], sizeof why[i]))
			return 0;
	/* The telling reason: a plugin found that does not load (cudart
	 * missing, say) rather than the places where there is none. */
	int tell = n - 1;
	for (int i = n - 1; i >= 0; i--)
		if (!strstr(why[i], "No such file"))
			tell = i;
	return boar_fail(err, BOAR_ENOGPU,
			 "no GPU support here: the CUDA engine %s was not "
			 "found or does not load (%s)",
			 BOAR_GPU_PLUGIN_NAME, why[tell]);
}

int boar_engine_for(const boar_options *o, const struct boar_engine_ops **ops,
		    boar_error *err)
{
	if (o->device != BOAR_DEVICE_GPU) {
		*ops = &boar_engine_cpu_ops;
		return 0;
	}
	return open_gpu(o, ops, err);
}

struct engine_warm {
	pthread_t thread;
	void (*warm)(int device);
	int device, n; /* devices device .. device + n - 1 (--gpus) */
	/* one GPU: the plugin's thread warms up and copies the rows */
	const struct boar_gpu_preload_ops *pre;
	void *preload;
	int joined; /* the warm-up thread (no preload) was joined */
};

static void *warm_main(void *p)
{
	struct engine_warm *w = p;
	for (int g = 0; g < w->n; g++)
		w->warm(w->device + g);
	return NULL;
}

void *boar_engine_warm_start(const boar_options *o)
{
	const struct boar_engine_ops *ops;
	Dl_info info;
	if (o->device != BOAR_DEVICE_GPU || open_gpu(o, &ops, NULL) ||
	    !dladdr((const void *)ops, &info) || !info.dli_fname)
		return NULL;
	/* The plugin is loaded: this only finds its handle. */
	void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	struct engine_warm *w = h ? calloc(1, sizeof *w) : NULL;
	if (!w)
		return NULL;
	*(void **)&w->warm = dlsym(h, BOAR_GPU_WARM_SYMBOL);
	w->device = o->gpu_id;
	w->n = o->n_gpus > 1 && o->n_gpus <= 64 ? o->n_gpus : 1;
	const struct boar_gpu_preload_ops *(*pre)(void);
	*(void **)&pre = dlsym(h, BOAR_GPU_PRELOAD_SYMBOL);
	if (w->n == 1 && pre && (w->pre = pre()) &&
	    (w->preload = w->pre->start(w->device)))
		return w;
	if (!w->warm || pthread_create(&w->thread, NULL, warm_main, w)) {
		free(w);
		return NULL;
	}
	return w;
}

void boar_engine_warm_rows(const boar_rows_ready *r, void *warm)
{
	struct engine_warm *w = warm;
	if (w && w->preload)
		w->pre->rows(r, w->preload);
}

const void *boar_engine_warm_done(void *warm, const struct boar_dataset *d)
{
	struct engine_warm *w = warm;
	if (!w)
		return NULL;
	if (w->preload)
		return w->pre->done(w->preload, d);
	if (!w->joined) /* CUDA is up before training starts */
		pthread_join(w->thread, NULL);
	w->joined = 1;
	return NULL;
}

void boar_engine_warm_join(void *warm)
{
	struct engine_warm *w = warm;
	if (!w)
		return;
	if (w->preload) {
		w->pre->done(w->preload, NULL); /* no-op after a first done */
		w->pre->release(w->preload);
	} else if (!w->joined) {
		pthread_join(w->thread, NULL);
	}
	free(w);
}
