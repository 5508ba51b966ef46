import gzip
import warnings

import numpy as np
import pandas as pd
import pytest

from querylogs import parse_report, read_log, write_log
from structanon.errors import InputError

HEADER = "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"
ROWS = [
    "142\trentdirect.com\t2006-03-01 07:17:12\t\t\n",
    "142\twww.prescriptionfortime.com\t2006-03-12 12:31:06\t1\thttp://www.a.com\n",
    "142\twww.prescriptionfortime.com\t2006-03-12 12:31:06\t3\thttp://www.b.com\n",
    "217\tlottery\t2006-03-01 11:58:51\t1\thttp://www.lottery.com\n",
]


def write(tmp_path, text, name="log.tsv", binary=False):
    path = tmp_path / name
    if binary:
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_aol_with_header(tmp_path):
    log = read_log(write(tmp_path, HEADER + "".join(ROWS)))
    assert list(log.columns) == ["user", "query", "time", "rank", "url"]
    assert len(log) == 4
    assert log["url"].isna().tolist() == [True, False, False, False]
    assert log["rank"].isna().tolist() == [True, False, False, False]
    assert log["rank"].iloc[2] == 3
    assert log["time"].iloc[0] == pd.Timestamp("2006-03-01 07:17:12")
    assert parse_report(log)["header"] is True


def test_aol_without_header_and_cut_lines(tmp_path):
    text = "".join(ROWS) + "300\tno click cut\t2006-03-02 10:00:00\n"
    log = read_log(write(tmp_path, text))
    assert len(log) == 5
    assert log["user"].tolist()[-1] == "300" and pd.isna(log["url"].iloc[-1])
    assert parse_report(log)["header"] is False


def test_malformed_lines_reported_by_number(tmp_path):
    lines = [
        HEADER,
        ROWS[0],
        "only\ttwo\n",
        ROWS[1],
        "9\tq\tnot a time\t\t\n",
        "9\tq\t2006-03-01 00:00:00\tx\thttp://u\n",
        "\tq\t2006-03-01 00:00:00\t\t\n",
        ROWS[3],
        ROWS[2],
        ROWS[0],
    ]
    path = write(tmp_path, "".join(lines))
    with pytest.warns(UserWarning, match="4 malformed line.s. dropped .lines 3, 5, 6, 7"):
        log = read_log(path, on_bad_lines="drop")
    report = parse_report(log)
    assert len(log) == 5
    assert report["malformed"] == 4
    assert [n for n, _ in report["malformed_lines"]] == [3, 5, 6, 7]
    reasons = dict(report["malformed_lines"])
    assert "time" in reasons[5] and "rank" in reasons[6] and "user" in reasons[7]
    with pytest.raises(InputError, match="on_bad_lines='drop'") as info:
        read_log(path)  # the default refuses, naming the first bad line
    assert info.value.line == 3 and info.value.path == str(path)
    # a field check failing before a split failure: the first in the file is named
    path = write(tmp_path, "".join([HEADER, lines[4], lines[2], *ROWS]), "order.tsv")
    with pytest.raises(InputError) as info:
        read_log(path, on_bad_lines="raise")
    assert info.value.line == 2 and "time" in info.value.message


@pytest.mark.parametrize("former", ["report", "skip"])
def test_former_on_bad_lines_values_drop_and_tell(tmp_path, former):
    """``report`` and ``skip`` still work, read as ``drop``: counted and named in a
    warning, never silent (``skip`` dropped silently before)."""
    path = write(tmp_path, HEADER + ROWS[0] + "only\ttwo\n" + ROWS[1] + ROWS[3])
    with pytest.warns(DeprecationWarning, match=f"{former!r} is a former value"):
        with pytest.warns(UserWarning, match="1 malformed line.s. dropped .lines 3"):
            log = read_log(path, on_bad_lines=former)
    assert len(log) == 3 and parse_report(log)["malformed"] == 1


@pytest.mark.parametrize("rank", ["9223372036854775808", "-99999999999999999999999", "1e30"])
def test_a_rank_beyond_64_bits_is_a_malformed_line(tmp_path, rank):
    line = f"9\tq\t2006-03-01 00:00:00\t{rank}\thttp://u\n"
    path = write(tmp_path, HEADER + ROWS[3] + line + ROWS[1])
    with pytest.warns(UserWarning, match="1 malformed"):
        log = read_log(path, on_bad_lines="drop")
    assert len(log) == 2 and dict(parse_report(log)["malformed_lines"]) == {
        3: "rank is out of range"
    }


@pytest.mark.parametrize("on_bad_lines", ["raise", "drop"])
def test_undecodable_bytes_name_the_line_and_the_byte(tmp_path, on_bad_lines):
    """A byte the encoding cannot decode is an error naming the file, the line and the
    byte, with the way to give the encoding (it used to be replaced by U+FFFD, changing
    the query); the right encoding reads the value as written."""
    raw = (
        (HEADER + ROWS[0]).encode()
        + b"5\tcaf\xe9 cr\xe8me\t2006-03-01 01:00:00\t\t\n"
        + "".join(ROWS[1:]).encode()
    )
    path = write(tmp_path, raw, binary=True)
    with pytest.raises(InputError, match=r"byte 0xe9 at offset 5.*--encoding") as info:
        read_log(path, on_bad_lines=on_bad_lines)
    assert info.value.line == 3 and info.value.path == str(path)
    log = read_log(path, encoding="latin-1", on_bad_lines=on_bad_lines)
    assert len(log) == 5 and log["query"].iloc[1] == "caf\u00e9 cr\u00e8me"
    csv = tmp_path / "log.csv"
    csv.write_bytes(b"user,query,time\n5,ok,2006-03-01 01:00:00\n6,caf\xe9,2006-03-01\n")
    with pytest.raises(InputError, match="byte 0xe9") as info:
        read_log(csv, "csv", on_bad_lines=on_bad_lines)
    assert info.value.line == 3
    assert read_log(csv, "csv", encoding="cp1252")["query"].tolist() == ["ok", "caf\u00e9"]
    with pytest.raises(InputError, match="unknown text encoding 'latin-9x'"):
        read_log(path, encoding="latin-9x")


def test_csv_line_with_too_many_fields(tmp_path):
    csv = tmp_path / "log.csv"
    csv.write_text(
        "user,query,time\n5,ok,2006-03-01\n6,a,b,2006-03-01\n7,fine,2006-03-02\n"
        "8,bad time,tomorrow\n"
    )
    with pytest.raises(InputError, match="4 fields, the header has 3") as info:
        read_log(csv, "csv")
    assert info.value.line == 3 and "--on-bad-lines drop" in str(info.value)
    with pytest.warns(UserWarning, match="2 malformed line.s. dropped .lines 3, 5"):
        log = read_log(csv, "csv", on_bad_lines="drop")
    assert log["user"].tolist() == ["5", "7"]
    assert [n for n, _ in parse_report(log)["malformed_lines"]] == [3, 5]


def test_quotes_and_odd_characters_kept_verbatim(tmp_path):
    text = HEADER + '7\t"exact phrase" and, commas # x\t2006-03-01 01:00:00\t\t\n' + ROWS[3]
    log = read_log(write(tmp_path, text))
    assert log["query"].tolist() == ['"exact phrase" and, commas # x', "lottery"]


def test_gzip_and_crlf(tmp_path):
    data = gzip.compress((HEADER + "".join(ROWS)).replace("\n", "\r\n").encode())
    log = read_log(write(tmp_path, data, "log.txt.gz", binary=True))
    assert len(log) == 4 and log["url"].iloc[3] == "http://www.lottery.com"


def test_csv_with_mapping_and_parquet(tmp_path):
    frame = pd.DataFrame(
        {
            "uid": ["a", "b"],
            "q": ["x", "y"],
            "ts": ["2006-03-01 10:00:00", "2006-03-02 11:00:00"],
            "clicked": ["http://x", ""],
        }
    )
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False)
    mapping = {"user": "uid", "query": "q", "time": "ts", "url": "clicked"}
    log = read_log(path, "csv", columns=mapping)
    assert log["user"].tolist() == ["a", "b"] and pd.isna(log["url"].iloc[1])
    assert log["rank"].isna().all()
    frame.to_parquet(tmp_path / "log.parquet")
    log2 = read_log(tmp_path / "log.parquet", "parquet", columns=mapping)
    pd.testing.assert_frame_equal(log, log2, check_like=True)
    with pytest.raises(InputError, match="query"):
        read_log(path, "csv", columns={"user": "uid", "time": "ts"})
    with pytest.raises(InputError):
        read_log(path, "csv", columns={"nope": "uid"})


def test_bad_arguments(tmp_path):
    with pytest.raises(InputError):
        read_log(tmp_path / "missing.tsv")
    path = write(tmp_path, HEADER)
    with pytest.raises(InputError, match="format"):
        read_log(path, format="xml")
    with pytest.raises(InputError, match="encoding"):
        read_log(path, encoding="no-such-codec")
    with pytest.raises(InputError, match="directory"):
        read_log(tmp_path)


def test_write_roundtrip(tmp_path):
    log = read_log(write(tmp_path, HEADER + "".join(ROWS)))
    out = write_log(log, tmp_path / "aol.tsv", aol=True)
    again = read_log(out)
    pd.testing.assert_frame_equal(log, again)
    pub = log.assign(time=log["time"].dt.floor("D"))
    text = write_log(pub, tmp_path / "pub.tsv.gz")
    lines = gzip.decompress(text.read_bytes()).decode().splitlines()
    assert lines[0] == "user\tquery\ttime\turl" and lines[1].split("\t")[2] == "2006-03-01"
    write_log(pub, tmp_path / "pub.parquet")
    assert len(pd.read_parquet(tmp_path / "pub.parquet")) == 4


def test_real_aol_sample_aggregates(h):
    path = h.shared_file("aol/aol_raw_sample_20k.tsv")
    log = read_log(path)
    report = parse_report(log)
    assert report["header"] and report["malformed"] == 0
    assert len(log) == 20_000
    assert log["user"].nunique() == 128
    assert int(log["url"].notna().sum()) == 11_343
    assert log["time"].min() >= pd.Timestamp("2006-03-01")
    assert log["time"].max() < pd.Timestamp("2006-06-01")
    assert np.array_equal(log["url"].notna().to_numpy(), log["rank"].notna().to_numpy())


def test_real_aol_head_through_column_mapping(h):
    path = h.shared_file("aol/aol_ia_head_clicks_92k.tsv.gz")
    log = read_log(
        path,
        "csv",
        sep="\t",
        columns={"user": "AnonID", "query": "Query", "time": "QueryTime", "rank": "ItemRank"},
    )
    report = parse_report(log)
    assert len(log) == 92_856 and report["malformed"] == 0
    assert log["user"].nunique() == 1_017
    assert log["url"].isna().all() and log["rank"].notna().all()


# a time with a UTC offset among naive ones: line 3 of the file
TZ_ROWS = [
    "479\tfamily guy\t2006-03-01 16:01:20\t\t\n",
    "479\tmovies\t2006-03-01T16:01:20+02:00\t1\thttp://movieweb.com\n",
    "479\tmovies\t2006-03-03 22:42:42\t2\thttp://www.imdb.com\n",
    "507\tcar decals\t2006-03-03 23:20:12\t\t\n",
]
TZ_TIMES = [
    "2006-03-01 16:01:20",
    "2006-03-01 14:01:20",
    "2006-03-03 22:42:42",
    "2006-03-03 23:20:12",
]


def test_a_time_with_an_offset_is_converted_and_shifts_no_other(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no pandas warning about mixed time zones
        log = read_log(write(tmp_path, HEADER + "".join(TZ_ROWS)), on_bad_lines="raise")
    assert log["time"].dtype == "datetime64[ns]"
    assert log["time"].tolist() == pd.to_datetime(TZ_TIMES).tolist()
    assert parse_report(log)["malformed"] == 0


def test_times_of_a_csv_or_parquet_log_with_offsets(tmp_path):
    times = ["2006-03-01 10:00", "2006-03-01T10:00-05:00", "2006-03-01 11:00"]
    frame = pd.DataFrame({"user": ["a", "b", "c"], "query": ["x", "y", "z"], "time": times})
    frame.to_csv(tmp_path / "log.csv", index=False)
    log = read_log(tmp_path / "log.csv", "csv", on_bad_lines="raise")
    utc = pd.to_datetime(["2006-03-01 10:00", "2006-03-01 15:00", "2006-03-01 11:00"])
    assert log["time"].tolist() == utc.tolist()
    # a tz-aware Parquet column is read as its UTC times
    paris = utc.tz_localize("UTC").tz_convert("Europe/Paris")
    frame.assign(time=paris).to_parquet(tmp_path / "log.parquet")
    log = read_log(tmp_path / "log.parquet", "parquet")
    assert log["time"].dtype == "datetime64[ns]" and log["time"].tolist() == utc.tolist()


def test_a_byte_order_mark_before_the_header_or_the_first_line(tmp_path):
    for text in (HEADER + "".join(ROWS), "".join(ROWS)):
        path = write(tmp_path, b"\xef\xbb\xbf" + text.encode(), binary=True)
        log = read_log(path, on_bad_lines="raise")
        report = parse_report(log)
        assert report["malformed"] == 0 and report["lines"] == 4
        assert report["header"] == text.startswith("AnonID")
        assert log["user"].tolist() == ["142", "142", "142", "217"]


def test_rows_keep_their_lines_after_more_dropped_lines_than_listed(tmp_path):
    # 150 over-long lines (3-152) are dropped, more than are listed; the bad time on line
    # 153 must not be mapped to line 3 as if only the listed lines had been dropped.
    csv = tmp_path / "log.csv"
    long_lines = "".join(f"{n},a,b,2006-03-01\n" for n in range(150))
    good = "".join(f"{n},ok,2006-03-02 10:00:00\n" for n in range(200))
    csv.write_text(
        "user,query,time\n5,ok,2006-03-01 09:00:00\n" + long_lines + "8,bad,tomorrow\n" + good
    )
    with pytest.warns(UserWarning, match="151 malformed line"):
        log = read_log(csv, "csv", on_bad_lines="drop")
    report = parse_report(log)
    assert report["malformed"] == 151 and len(log) == 201
    assert [n for n, _ in report["malformed_lines"]] == list(range(3, 103))
    assert all("fields" in reason for _, reason in report["malformed_lines"])


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_csv_lines_count_blank_lines_and_dropped_lines(tmp_path, engine):
    """CSV rows were named by data row + 2 (plus the dropped lines before them): a blank
    line above a bad time, which the reader skips, made its line one too low."""
    csv = tmp_path / "log.csv"
    csv.write_text(
        "user,query,time\n5,ok,2006-03-01 09:00:00\n\n6,a,b,2006-03-01\n\n"
        '7,"two\nlines",2006-03-01 09:00:00\n8,bad,tomorrow\n9,ok,2006-03-01 10:00:00\n'
    )
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
        from querylogs.io import read_log_dask

        def read(**kw):
            return read_log_dask(csv, "csv", **kw)[1]
    else:

        def read(**kw):
            return parse_report(read_log(csv, "csv", **kw))

    with pytest.raises(InputError) as info:
        read()
    assert info.value.line == 4  # the line with one field too many
    with pytest.warns(UserWarning, match="2 malformed line"):
        report = read(on_bad_lines="drop")
    assert report["malformed_lines"] == [
        (4, report["malformed_lines"][0][1]),
        (8, "time is not a date-time"),
    ]


def test_a_repeated_aol_header_is_named_as_such(tmp_path):
    """Two logs concatenated: the second header was "time is not a date-time"."""
    path = write(tmp_path, HEADER + "".join(ROWS[:2]) + HEADER + "".join(ROWS[2:]))
    with pytest.raises(InputError, match="the header line, repeated") as info:
        read_log(path)
    assert info.value.line == 4
    with pytest.warns(UserWarning, match="1 malformed line"):
        log = read_log(path, on_bad_lines="drop")
    assert len(log) == len(ROWS)
    assert parse_report(log)["malformed_lines"] == [
        (4, "the header line, repeated (logs concatenated?)")
    ]
