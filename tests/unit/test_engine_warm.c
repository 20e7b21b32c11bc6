/* test_engine_warm.c - boar_engine_warm_start/join (engine_gpu.c), which
 * start CUDA on a thread while the CLI reads the data: nothing starts for
 * the CPU or when no plugin opens (NULL, and joining NULL is a no-op);
 * with the build's plugin (tests/run-tests exports BUILD) the warm-up
 * starts, runs and is joined, with or without a device (a machine without
 * one leaves the failure for boar_train to report). Exit 77 when the
 * build has no GPU plugin.
 */
#include <stdio.h>
#include <unistd.h>

#include "boar.h"
#include "engine/engine_ops.h"
#include "testutil.h"

int main(void)
{
	boar_options o;
	boar_options_default(&o);
	CHECK(boar_engine_warm_start(&o) == NULL, "CPU: nothing to start");
	boar_engine_warm_join(NULL);

	o.device = BOAR_DEVICE_GPU;
	o.gpu_plugin = "/nonexistent/libboar-gpu.so.0";
	CHECK(boar_engine_warm_start(&o) == NULL, "no plugin: nothing to start");

	const char *plugin = test_gpu_plugin();
	if (!plugin || access(plugin, R_OK))
		TEST_SKIP("no GPU plugin in the build directory");
	o.gpu_plugin = plugin;
	void *w = boar_engine_warm_start(&o);
	CHECK(w != NULL, "the plugin %s has a warm-up", plugin);
	boar_engine_warm_join(w);
	/* twice in a row: the second finds CUDA started */
	w = boar_engine_warm_start(&o);
	CHECK(w != NULL, "a second warm-up");
	boar_engine_warm_join(w);
	return TEST_RESULT();
}
