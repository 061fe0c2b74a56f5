/* One line of a JSON-lines file as a record, with the UTF-8 of some of its strings: the
 * batch command's reading (fingerprints/batch/replay.py, read_jsonl_texts) in C, for the
 * lines it reads exactly as json.loads does. The batch writes the texts again as UTF-8
 * (Parquet's string columns): kept from the file, they are not encoded a second time
 * (CPython's encoder, about 26 instructions a character, 20 thousand a Xinhua article),
 * and the bytes are read without decoding the file as a whole first.
 *
 * json_record(data, start, end, keys) -> (dict, tuple of bytes) | None
 *
 * data[start:end] (bytes: one line, without its line feed) read as one JSON object whose
 * values are strings, numbers, true, false or null, with JSON whitespace around its
 * tokens: the dict json.loads gives for it, and for each str of `keys` the UTF-8 of that
 * key's string (b"" when the object has no such key; the last value of a repeated key,
 * as the dict has it). None for any other line: another value, an array or an object
 * as a value (or NaN, Infinity, a number of over JSONL_MAX_NUMBER characters), a value
 * of one of `keys` that is not a string, a control character or an escaped lone
 * surrogate in a string, invalid UTF-8, invalid JSON; the caller then reads that line
 * as before (json.loads: its value or its error).
 *
 * Only the bytes below 0x80 are looked at for the structure (UTF-8's other bytes are
 * all 0x80 or above); the strings are decoded by CPython's UTF-8 decoder, the numbers
 * converted by what json.loads calls (int's and float's parsers). Included by
 * _kernel.c. */

#define JSONL_MAX_KEYS 8
#define JSONL_MAX_NUMBER 40

static int jsonl_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int jsonl_hex(const char *at, unsigned *out) {
    unsigned value = 0;
    for (int i = 0; i < 4; i++) {
        char c = at[i];
        unsigned digit;
        if (c >= '0' && c <= '9') digit = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') digit = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') digit = (unsigned)(c - 'A' + 10);
        else return 0;
        value = value << 4 | digit;
    }
    *out = value;
    return 1;
}

/* The string whose opening quote is just before `at`, ending before `end`: *text and
 * *size its UTF-8, in the line itself when it has no escapes, else in *owner (a new
 * bytes of exactly that size, its escapes resolved); *after just past its closing
 * quote. 1 when read, 0 when the line is not one for this reader, -1 on an error set. */
static int jsonl_string(const char *at, const char *end, const char **text, Py_ssize_t *size,
                        PyObject **owner, const char **after) {
    /* its closing quote: the first one after an even number of backslashes */
    const char *quote = at;
    for (;;) {
        quote = memchr(quote, '"', (size_t)(end - quote));
        if (!quote) return 0;
        const char *back = quote;
        while (back > at && back[-1] == '\\') back--;
        if ((quote - back) % 2 == 0) break;
        quote++;
    }
    Py_ssize_t raw = quote - at;
    unsigned char control = 0; /* json.loads (strict) refuses them: its error, not ours */
    for (Py_ssize_t i = 0; i < raw; i++) control |= (unsigned char)at[i] < 0x20;
    if (control) return 0;
    *after = quote + 1;
    *owner = NULL;
    const char *escape = memchr(at, '\\', (size_t)raw);
    if (!escape) {
        *text = at;
        *size = raw;
        return 1;
    }
    /* resolved, never longer than the escaped form */
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, raw);
    if (!bytes) return -1;
    char *out = PyBytes_AS_STRING(bytes), *write = out;
    const char *read = at;
    while (escape) {
        memcpy(write, read, (size_t)(escape - read));
        write += escape - read;
        char kind = escape[1]; /* escape < quote - 1: a backslash never ends the string */
        read = escape + 2;
        switch (kind) {
        case '"': *write++ = '"'; break;
        case '\\': *write++ = '\\'; break;
        case '/': *write++ = '/'; break;
        case 'b': *write++ = '\b'; break;
        case 'f': *write++ = '\f'; break;
        case 'n': *write++ = '\n'; break;
        case 'r': *write++ = '\r'; break;
        case 't': *write++ = '\t'; break;
        case 'u': {
            unsigned code, low;
            if (quote - read < 4 || !jsonl_hex(read, &code)) goto other;
            read += 4;
            if (code >= 0xDC00 && code <= 0xDFFF) goto other; /* a lone low surrogate */
            if (code >= 0xD800 && code <= 0xDBFF) {
                if (quote - read < 6 || read[0] != '\\' || read[1] != 'u' ||
                    !jsonl_hex(read + 2, &low) || low < 0xDC00 || low > 0xDFFF)
                    goto other; /* a lone high surrogate */
                read += 6;
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            }
            /* the escape's UTF-8 is never longer than the escape (6 or 12 bytes) */
            if (code < 0x80) {
                *write++ = (char)code;
            } else if (code < 0x800) {
                *write++ = (char)(0xC0 | code >> 6);
                *write++ = (char)(0x80 | (code & 0x3F));
            } else if (code < 0x10000) {
                *write++ = (char)(0xE0 | code >> 12);
                *write++ = (char)(0x80 | (code >> 6 & 0x3F));
                *write++ = (char)(0x80 | (code & 0x3F));
            } else {
                *write++ = (char)(0xF0 | code >> 18);
                *write++ = (char)(0x80 | (code >> 12 & 0x3F));
                *write++ = (char)(0x80 | (code >> 6 & 0x3F));
                *write++ = (char)(0x80 | (code & 0x3F));
            }
            break;
        }
        default:
            goto other;
        }
        escape = memchr(read, '\\', (size_t)(quote - read));
    }
    memcpy(write, read, (size_t)(quote - read));
    write += quote - read;
    if (_PyBytes_Resize(&bytes, write - out) < 0) return -1;
    *owner = bytes;
    *text = PyBytes_AS_STRING(bytes);
    *size = PyBytes_GET_SIZE(bytes);
    return 1;
other:
    Py_DECREF(bytes);
    return 0;
}

static int jsonl_digit(char c) { return c >= '0' && c <= '9'; }

/* The number, true, false or null at *at (a new reference; *at moved past it), or NULL:
 * without an error when it is not one this reader takes. A number is json.loads's
 * longest match of -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?, an int without a
 * fraction or an exponent, else a float; the caller checks what follows it. */
static PyObject *jsonl_scalar(const char **at, const char *end) {
    const char *read = *at, *start = read;
    if (end - read >= 4 && !memcmp(read, "null", 4)) {
        *at = read + 4;
        Py_RETURN_NONE;
    }
    if (end - read >= 4 && !memcmp(read, "true", 4)) {
        *at = read + 4;
        Py_RETURN_TRUE;
    }
    if (end - read >= 5 && !memcmp(read, "false", 5)) {
        *at = read + 5;
        Py_RETURN_FALSE;
    }
    int is_float = 0;
    if (read < end && *read == '-') read++;
    if (read < end && *read == '0') {
        read++;
    } else if (read < end && *read >= '1' && *read <= '9') {
        while (read < end && jsonl_digit(*read)) read++;
    } else {
        return NULL;
    }
    if (end - read >= 2 && read[0] == '.' && jsonl_digit(read[1])) {
        read += 2;
        while (read < end && jsonl_digit(*read)) read++;
        is_float = 1;
    }
    if (read < end && (*read == 'e' || *read == 'E')) {
        const char *exponent = read + 1;
        if (exponent < end && (*exponent == '+' || *exponent == '-')) exponent++;
        if (exponent < end && jsonl_digit(*exponent)) {
            while (exponent < end && jsonl_digit(*exponent)) exponent++;
            read = exponent;
            is_float = 1;
        }
    }
    if (read - start > JSONL_MAX_NUMBER) return NULL;
    char number[JSONL_MAX_NUMBER + 1];
    memcpy(number, start, (size_t)(read - start));
    number[read - start] = '\0';
    *at = read;
    if (!is_float) return PyLong_FromString(number, NULL, 10);
    double value = PyOS_string_to_double(number, NULL, NULL); /* float()'s parser */
    if (value == -1.0 && PyErr_Occurred()) return NULL;
    return PyFloat_FromDouble(value);
}

static PyObject *json_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_ssize_t start, stop;
    if (nargs != 4 || !PyBytes_Check(args[0]) || !PyTuple_Check(args[3]) ||
        PyTuple_GET_SIZE(args[3]) > JSONL_MAX_KEYS) {
        PyErr_SetString(PyExc_TypeError,
                        "json_record(data: bytes, start: int, end: int, keys: tuple[str, ...])");
        return NULL;
    }
    start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    stop = PyLong_AsSsize_t(args[2]);
    if (stop == -1 && PyErr_Occurred()) return NULL;
    if (start < 0 || stop < start || stop > PyBytes_GET_SIZE(args[0])) {
        PyErr_SetString(PyExc_ValueError, "json_record: start and end outside the data");
        return NULL;
    }
    PyObject *keys = args[3];
    Py_ssize_t wanted = PyTuple_GET_SIZE(keys);
    PyObject *texts[JSONL_MAX_KEYS] = {NULL};
    PyObject *record = PyDict_New(), *key = NULL, *value = NULL, *owner = NULL;
    if (!record) return NULL;
    const char *at = PyBytes_AS_STRING(args[0]) + start;
    const char *end = PyBytes_AS_STRING(args[0]) + stop;
    const char *text;
    Py_ssize_t size;
    int read = 0;

    while (at < end && jsonl_space(*at)) at++;
    if (at == end || *at++ != '{') goto other;
    while (at < end && jsonl_space(*at)) at++;
    if (at < end && *at == '}') {
        at++;
        goto done;
    }
    for (;;) {
        if (at == end || *at++ != '"') goto other;
        read = jsonl_string(at, end, &text, &size, &owner, &at);
        if (read <= 0) goto stop;
        key = PyUnicode_DecodeUTF8(text, size, NULL);
        Py_CLEAR(owner);
        if (!key) goto undecoded;
        PyUnicode_InternInPlace(&key); /* the record's keys shared, as literals are */
        while (at < end && jsonl_space(*at)) at++;
        if (at == end || *at++ != ':') goto other;
        while (at < end && jsonl_space(*at)) at++;
        if (at == end) goto other;
        int is_string = *at == '"';
        if (is_string) {
            read = jsonl_string(at + 1, end, &text, &size, &owner, &at);
            if (read <= 0) goto stop;
            value = PyUnicode_DecodeUTF8(text, size, NULL);
            if (!value) goto undecoded;
        } else {
            value = jsonl_scalar(&at, end);
            if (!value) {
                if (PyErr_Occurred()) goto fail;
                goto other;
            }
        }
        for (Py_ssize_t i = 0; i < wanted; i++) {
            int same = PyObject_RichCompareBool(key, PyTuple_GET_ITEM(keys, i), Py_EQ);
            if (same < 0) goto fail;
            if (same) {
                if (!is_string) goto other; /* its text is str(value or ""): json.loads's */
                PyObject *bytes = owner ? Py_NewRef(owner)
                                        : PyBytes_FromStringAndSize(text, size);
                if (!bytes) goto fail;
                Py_XSETREF(texts[i], bytes);
            }
        }
        Py_CLEAR(owner);
        if (PyDict_SetItem(record, key, value) < 0) goto fail;
        Py_CLEAR(key);
        Py_CLEAR(value);
        while (at < end && jsonl_space(*at)) at++;
        if (at == end) goto other;
        if (*at == '}') {
            at++;
            break;
        }
        if (*at++ != ',') goto other;
        while (at < end && jsonl_space(*at)) at++;
    }
done:
    while (at < end && jsonl_space(*at)) at++;
    if (at != end) goto other;
    PyObject *utf8 = PyTuple_New(wanted);
    if (!utf8) goto fail;
    for (Py_ssize_t i = 0; i < wanted; i++) {
        PyObject *bytes = texts[i] ? texts[i] : PyBytes_FromStringAndSize(NULL, 0);
        if (!bytes) {
            Py_DECREF(utf8);
            goto fail;
        }
        texts[i] = NULL;
        PyTuple_SET_ITEM(utf8, i, bytes);
    }
    PyObject *both = PyTuple_New(2);
    if (!both) {
        Py_DECREF(utf8);
        goto fail;
    }
    PyTuple_SET_ITEM(both, 0, record);
    PyTuple_SET_ITEM(both, 1, utf8);
    return both;

undecoded: /* invalid UTF-8: the caller's decoding of the line raises its error */
    if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) goto fail;
    PyErr_Clear();
    goto other;
stop:
    if (read < 0) goto fail;
other:
    Py_XDECREF(key);
    Py_XDECREF(value);
    Py_XDECREF(owner);
    for (Py_ssize_t i = 0; i < wanted; i++) Py_XDECREF(texts[i]);
    Py_DECREF(record);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(key);
    Py_XDECREF(value);
    Py_XDECREF(owner);
    for (Py_ssize_t i = 0; i < wanted; i++) Py_XDECREF(texts[i]);
    Py_DECREF(record);
    return NULL;
}
