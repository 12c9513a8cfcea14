/* Fuzz target: the database reader that `convert`, `summary` (its findings too), `merge`
 * and the report use. The input
 * is a database file, read as fuzz_read_database() says. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_read_database((char *)fuzz_file("input.db", data, size));
	return 0;
}
