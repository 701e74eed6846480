// SPDX-License-Identifier: GPL-2.0
// The node agent's BPF loader: a small libbpf program the agent runs as a subprocess.
//
//   feedback_loader run OBJ [--btf FILE] [--config V0,V1,...]
//       opens OBJ (CO-RE relocations against FILE, default the kernel's own BTF), loads it,
//       writes V0, V1, ... into its `feedback_config` array map, attaches every program and prints
//       "ready". Then, for each line on stdin, prints every hash map as
//       "MAP KEY_HEX VALUE" lines (VALUE a u64) and a final "end". On end of stdin it
//       detaches and exits 0.
//   feedback_loader check OBJ [--btf FILE]
//       loads and attaches OBJ, waits (at most 2 s) until its .bss `switches` counter moves,
//       detaches and prints "attached, N events, detached".
// Failures print "error: STAGE: REASON" on stderr and exit 1.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define MAX_LINKS 16
#define MAX_KEY 64

static int fail(const char *stage, int error)
{
	fprintf(stderr, "error: %s: %s\n", stage, strerror(error < 0 ? -error : error));
	return 1;
}

static int quiet(enum libbpf_print_level level, const char *format, va_list args)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, format, args);
}

struct loaded {
	struct bpf_object *object;
	struct bpf_link *links[MAX_LINKS];
	int link_count;
};

static void unload(struct loaded *loaded)
{
	for (int i = 0; i < loaded->link_count; i++)
		bpf_link__destroy(loaded->links[i]);
	bpf_object__close(loaded->object);
}

static int load(struct loaded *loaded, const char *path, const char *btf)
{
	if (btf && access(btf, R_OK))
		return fail("btf", errno);
	LIBBPF_OPTS(bpf_object_open_opts, options, .btf_custom_path = btf);
	loaded->object = bpf_object__open_file(path, &options);
	if (!loaded->object)
		return fail("open", errno);
	int error = bpf_object__load(loaded->object);
	if (error) {
		bpf_object__close(loaded->object);
		loaded->object = NULL;
		return fail("load (verifier or permission)", error);
	}
	return 0;
}

static int configure(struct loaded *loaded, const char *values)
{
	struct bpf_map *map = bpf_object__find_map_by_name(loaded->object, "feedback_config");
	if (!map)
		return values ? fail("config map", ENOENT) : 0;
	char *copy = strdup(values ? values : ""), *rest = copy, *item;
	for (__u32 index = 0; (item = strsep(&rest, ",")) && *item; index++) {
		__u64 value = strtoull(item, NULL, 10);
		if (bpf_map__update_elem(map, &index, sizeof(index), &value, sizeof(value), 0)) {
			free(copy);
			return fail("config", errno);
		}
	}
	free(copy);
	return 0;
}

static int attach(struct loaded *loaded)
{
	struct bpf_program *program;
	bpf_object__for_each_program(program, loaded->object) {
		if (loaded->link_count == MAX_LINKS)
			return fail("attach", E2BIG);
		struct bpf_link *link = bpf_program__attach(program);
		if (!link)
			return fail("attach", errno);
		loaded->links[loaded->link_count++] = link;
	}
	return 0;
}

static void dump(struct loaded *loaded)
{
	struct bpf_map *map;
	bpf_object__for_each_map(map, loaded->object) {
		__u32 key_size = bpf_map__key_size(map);
		if (bpf_map__type(map) != BPF_MAP_TYPE_HASH || key_size > MAX_KEY ||
		    bpf_map__value_size(map) != sizeof(__u64))
			continue;
		unsigned char key[MAX_KEY], next[MAX_KEY];
		__u64 value;
		void *previous = NULL;
		while (!bpf_map__get_next_key(map, previous, next, key_size)) {
			memcpy(key, next, key_size);
			previous = key;
			if (bpf_map__lookup_elem(map, key, key_size, &value, sizeof(value), 0))
				continue;  // deleted meanwhile (oncpu_since)
			printf("%s ", bpf_map__name(map));
			for (__u32 i = 0; i < key_size; i++)
				printf("%02x", key[i]);
			printf(" %llu\n", (unsigned long long)value);
		}
	}
	printf("end\n");
	fflush(stdout);
}

static int run(struct loaded *loaded)
{
	printf("ready\n");
	fflush(stdout);
	char line[64];
	while (fgets(line, sizeof(line), stdin))
		dump(loaded);
	return 0;
}

static int check(struct loaded *loaded)
{
	struct bpf_map *bss = bpf_object__find_map_by_name(loaded->object, ".bss");
	if (!bss)
		return fail("check: no .bss counter", ENOENT);
	__u32 zero = 0;
	__u64 count = 0;
	struct timespec pause = {0, 10 * 1000 * 1000};
	for (int tries = 0; tries < 200 && !count; tries++) {
		nanosleep(&pause, NULL);
		if (bpf_map__lookup_elem(bss, &zero, sizeof(zero), &count, sizeof(count), 0))
			return fail("check: read counter", errno);
	}
	for (int i = 0; i < loaded->link_count; i++)
		bpf_link__destroy(loaded->links[i]);
	loaded->link_count = 0;
	if (!count)
		return fail("check: the program never ran", ETIMEDOUT);
	printf("attached, %llu events, detached\n", (unsigned long long)count);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "run") && strcmp(argv[1], "check"))) {
		fprintf(stderr, "usage: %s run|check OBJ [--btf FILE] [--config V0,V1,...]\n",
			argv[0]);
		return 2;
	}
	const char *btf = NULL, *values = NULL;
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--btf"))
			btf = argv[i + 1];
		else if (!strcmp(argv[i], "--config"))
			values = argv[i + 1];
	}
	libbpf_set_print(quiet);
	struct loaded loaded = {0};
	int status = load(&loaded, argv[2], btf);
	if (status)
		return status;
	status = configure(&loaded, values);
	if (!status)
		status = attach(&loaded);
	if (!status)
		status = strcmp(argv[1], "run") ? check(&loaded) : run(&loaded);
	unload(&loaded);
	return status;
}
