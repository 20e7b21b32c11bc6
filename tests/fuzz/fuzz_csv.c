/* fuzz_csv.c - the CSV/TSV parser under four sets of options: everything
 * detected; no header (a BOM and blank lines before the first row);
 * ';'-separated with a header, column 1 the label, named and ranged
 * column lists and log-scaled counts; tab-separated with columns by
 * number. Each input is parsed under all four. */
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	boar_load_options o;
	boar_load_options_default(&o);
	fuzz_parse(data, size, BOAR_FORMAT_CSV, &o);

	o.csv_header = -1;
	fuzz_parse(data, size, BOAR_FORMAT_CSV, &o);

	boar_load_options_default(&o);
	o.csv_separator = ';';
	o.csv_header = 1;
	o.csv_label = "label";
	o.csv_ignore = "id";
	o.csv_categorical = "C1-C3";
	o.csv_numeric = "I1,I2";
	o.csv_log = 1;
	o.hash_bits = 4;
	fuzz_parse(data, size, BOAR_FORMAT_CSV, &o);

	boar_load_options_default(&o);
	o.csv_separator = '\t';
	o.csv_label = "1";
	o.csv_ignore = "0";
	o.csv_categorical = "3-5";
	o.csv_numeric = "2";
	fuzz_parse(data, size, BOAR_FORMAT_CSV, &o);
	return 0;
}
