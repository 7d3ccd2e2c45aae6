// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_create(): what a root-run dump or record may do with a path a user
 * prepared.  Each case plants what an attacker would, then checks both
 * the answer and that the planted target is untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "../../lib/util/outfile.h"

static char dir[] = "/tmp/test_outfile.XXXXXX";

static const char *at(const char *name)
{
	static char path[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
	return path[i];
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void assert_content(const char *name, const char *text)
{
	char buf[64] = { 0 };
	FILE *f = fopen(at(name), "r");

	assert_non_null(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) <= sizeof(buf) - 1);
	fclose(f);
	assert_string_equal(buf, text);
}

static void test_new_file_has_the_mode(void **state)
{
	struct stat st;
	mode_t old = umask(0);
	int fd = out_create(at("new"), 0600, 0);

	(void)state;
	umask(old);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);
}

static void test_existing_file_needs_replace(void **state)
{
	int fd;

	(void)state;
	put("old", "old log");
	assert_int_equal(out_create(at("old"), 0600, 0), -EEXIST);
	assert_content("old", "old log");
	fd = out_create(at("old"), 0600, OUT_REPLACE);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "new", 3), 3);
	close(fd);
	assert_content("old", "new");
}

static void test_symlinks_are_never_followed(void **state)
{
	(void)state;
	put("target", "precious");
	assert_int_equal(symlink(at("target"), at("link")), 0);
	assert_int_equal(out_create(at("link"), 0600, 0), -ELOOP);
	assert_int_equal(out_create(at("link"), 0600, OUT_REPLACE), -ELOOP);
	assert_content("target", "precious");
	/* a dangling one must not create its target either */
	assert_int_equal(symlink(at("nothing"), at("dangling")), 0);
	assert_int_equal(out_create(at("dangling"), 0600, OUT_REPLACE), -ELOOP);
	assert_int_equal(access(at("nothing"), F_OK), -1);
}

static void test_hard_links_are_not_replaced(void **state)
{
	(void)state;
	put("shadow", "precious");
	assert_int_equal(link(at("shadow"), at("hard")), 0);
	assert_int_equal(out_create(at("hard"), 0600, OUT_REPLACE), -EPERM);
	assert_content("shadow", "precious");
}

static void test_fifo_and_directory_are_refused(void **state)
{
	(void)state;
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	/* would block without O_NONBLOCK: no reader */
	assert_int_equal(out_create(at("fifo"), 0600, OUT_REPLACE), -EPERM);
	assert_int_equal(mkdir(at("subdir"), 0700), 0);
	assert_int_equal(out_create(at("subdir"), 0600, OUT_REPLACE), -EISDIR);
}

static void test_another_users_file_is_not_replaced(void **state)
{
	(void)state;
	if (geteuid())
		skip_because("needs root to give a file to another user");
	put("theirs", "their data");
	assert_int_equal(chown(at("theirs"), 65534, 65534), 0);
	assert_int_equal(out_create(at("theirs"), 0600, OUT_REPLACE), -EPERM);
	assert_content("theirs", "their data");
}

static void test_reasons_name_the_refusal(void **state)
{
	(void)state;
	assert_non_null(strstr(out_create_reason(-ELOOP), "symbolic link"));
	assert_non_null(strstr(out_create_reason(-EPERM), "one link"));
	assert_null(out_create_reason(-ENOSPC));
}

static int cleanup(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_file_has_the_mode),
		cmocka_unit_test(test_existing_file_needs_replace),
		cmocka_unit_test(test_symlinks_are_never_followed),
		cmocka_unit_test(test_hard_links_are_not_replaced),
		cmocka_unit_test(test_fifo_and_directory_are_refused),
		cmocka_unit_test(test_another_users_file_is_not_replaced),
		cmocka_unit_test(test_reasons_name_the_refusal),
	};

	if (!mkdtemp(dir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, cleanup);
}
