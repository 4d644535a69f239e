package migrate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// tables reads the tables of Java Nacos's schema (conf/nacos-mysql.sql,
// conf/schema.sql): from MySQL directly, or from the embedded Derby of a
// Java Nacos through its GET /v1/cs/ops/derby. Rows come in the order
// given; columns are named in lower case.
type tables interface {
	// scan calls fn for every row of "select cols from table order by ...".
	scan(ctx context.Context, table string, cols []string, orderBy string, fn func(row) error) error
	count(ctx context.Context, table string) (int, error)
	describe() string
	close() error
}

// row is one table row; a NULL column is an invalid NullString.
type row map[string]sql.NullString

func (r row) str(c string) string { return r[c].String }

func (r row) strp(c string) *string {
	v, ok := r[c]
	if !ok || !v.Valid {
		return nil
	}
	s := v.String
	return &s
}

func (r row) i64(c string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(r[c].String), 10, 64)
	return n
}

// ms reads a DATETIME/TIMESTAMP column as epoch milliseconds: MySQL's text
// form in loc (the Java server's zone, which its JDBC driver wrote in), or
// the ISO form with offset that Jackson gives for Derby.
func (r row) ms(c string, loc *time.Location) int64 {
	v := strings.TrimSpace(r[c].String)
	if v == "" {
		return 0
	}
	for _, f := range []string{"2006-01-02T15:04:05.000-07:00", "2006-01-02T15:04:05.999999999Z07:00", time.RFC3339Nano} {
		if t, err := time.Parse(f, v); err == nil {
			return t.UnixMilli()
		}
	}
	if t, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", v, loc); err == nil {
		return t.UnixMilli()
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil { // tenant_info's bigint times
		return n
	}
	return 0
}

// mysqlTables reads a MySQL database read-only.
type mysqlTables struct {
	db  *sql.DB
	dsn string // for messages, password hidden
}

// openMySQL opens dsn (go-sql-driver form user:pass@tcp(host:port)/db, or
// Java's jdbc:mysql://host:port/db?... with user and password given apart).
func openMySQL(ctx context.Context, dsn, user, password string) (*mysqlTables, error) {
	cfg, err := mysqlConfig(dsn, user, password)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, fmt.Errorf("migrate: mysql: %w", err)
	}
	db.SetMaxOpenConns(2)
	shown := cfg.Clone()
	shown.Passwd = "***"
	t := &mysqlTables{db: db, dsn: shown.FormatDSN()}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: mysql %s: %w", t.dsn, err)
	}
	// read-only: a consistent snapshot and no writes by mistake
	if _, err := db.ExecContext(ctx, "SET SESSION TRANSACTION READ ONLY"); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: mysql %s: %w", t.dsn, err)
	}
	return t, nil
}

func mysqlConfig(dsn, user, password string) (*mysql.Config, error) {
	var cfg *mysql.Config
	if rest, ok := strings.CutPrefix(dsn, "jdbc:mysql://"); ok {
		u, err := url.Parse("mysql://" + rest)
		if err != nil {
			return nil, fmt.Errorf("migrate: mysql url %q is not a URL", redactDSN(dsn))
		}
		cfg = mysql.NewConfig()
		cfg.Net, cfg.Addr, cfg.DBName = "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
		if u.Port() == "" {
			cfg.Addr += ":3306"
		}
	} else {
		var err error
		if cfg, err = mysql.ParseDSN(dsn); err != nil {
			return nil, fmt.Errorf("migrate: mysql dsn: %w", err)
		}
	}
	if user != "" {
		cfg.User = user
	}
	if password != "" {
		cfg.Passwd = password
	}
	if cfg.DBName == "" {
		return nil, fmt.Errorf("migrate: mysql dsn %q names no database", redactDSN(dsn))
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["charset"] = "utf8mb4"
	cfg.ParseTime = false // times are read as text, in the Java server's zone
	cfg.Timeout = 10 * time.Second
	return cfg, nil
}

// redactDSN is a MySQL DSN or jdbc: URL as it may be shown: its password
// (user:password@, or a password parameter) hidden.
func redactDSN(dsn string) string {
	if rest, ok := strings.CutPrefix(dsn, "jdbc:mysql://"); ok {
		return "jdbc:" + RedactURL("mysql://"+rest)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		if at := strings.LastIndexByte(dsn, '@'); at >= 0 {
			return "***" + dsn[at:] // user:password@…: everything before the @
		}
		return dsn
	}
	if cfg.Passwd != "" {
		cfg.Passwd = "***"
	}
	return cfg.FormatDSN()
}

func (t *mysqlTables) describe() string { return "MySQL " + t.dsn }
func (t *mysqlTables) close() error     { return t.db.Close() }

func (t *mysqlTables) count(ctx context.Context, table string) (int, error) {
	var n int
	if err := t.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		if isMissingTable(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("migrate: mysql count %s: %w", table, err)
	}
	return n, nil
}

func isMissingTable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1146
}

func (t *mysqlTables) scan(ctx context.Context, table string, cols []string, orderBy string, fn func(row) error) error {
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + table
	if orderBy != "" {
		q += " ORDER BY " + orderBy
	}
	rows, err := t.db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("migrate: mysql %s: %w", table, err)
	}
	defer rows.Close()
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("migrate: mysql %s: %w", table, err)
		}
		r := make(row, len(cols))
		for i, c := range cols {
			r[c] = vals[i]
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrate: mysql %s: %w", table, err)
	}
	return nil
}

// derbyTables reads the embedded Derby of a Java Nacos (standalone, or a
// cluster with embeddedStorage) with GET /v1/cs/ops/derby, which runs one
// SELECT and answers its rows (admin only when auth is on).
type derbyTables struct {
	c        *client
	pageRows int
}

// probeDerby reports whether the Java server answers /v1/cs/ops/derby
// (false, nil: it runs on an external database).
func probeDerby(ctx context.Context, c *client) (bool, error) {
	var res derbyResult
	err := c.get(ctx, "/v1/cs/ops/derby", url.Values{"sql": {"select count(*) as n from config_info"}}, &res)
	if err != nil {
		return false, fmt.Errorf("migrate: probe the storage of %s: %w", c.base, err)
	}
	if res.Code != 200 {
		if strings.Contains(res.Message, "not Derby") {
			return false, nil
		}
		return false, fmt.Errorf("migrate: %s /v1/cs/ops/derby: %d %s", c.base, res.Code, res.Message)
	}
	return true, nil
}

type derbyResult struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Data    []map[string]any `json:"data"`
}

func (t *derbyTables) describe() string { return "Derby of " + t.c.base + " (via /v1/cs/ops/derby)" }
func (t *derbyTables) close() error     { return nil }

func (t *derbyTables) query(ctx context.Context, sqlText string) ([]map[string]any, error) {
	var res derbyResult
	if err := t.c.get(ctx, "/v1/cs/ops/derby", url.Values{"sql": {sqlText}}, &res); err != nil {
		return nil, err
	}
	if res.Code != 200 {
		return nil, fmt.Errorf("migrate: derby %q: %d %s", sqlText, res.Code, res.Message)
	}
	return res.Data, nil
}

func (t *derbyTables) count(ctx context.Context, table string) (int, error) {
	rows, err := t.query(ctx, "select count(*) as n from "+table)
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("migrate: derby count %s: %d rows", table, len(rows))
	}
	for _, v := range rows[0] {
		n, _ := strconv.Atoi(derbyText(v).String)
		return n, nil
	}
	return 0, nil
}

func (t *derbyTables) scan(ctx context.Context, table string, cols []string, orderBy string, fn func(row) error) error {
	page := t.pageRows
	if page <= 0 {
		page = 200
	}
	for off := 0; ; off += page {
		q := "select " + strings.Join(cols, ", ") + " from " + table
		if orderBy != "" {
			q += " order by " + orderBy
		}
		// Java appends "OFFSET 0 ROWS FETCH NEXT 1000 ROWS ONLY" to a query
		// without its own limit
		q += fmt.Sprintf(" OFFSET %d ROWS FETCH NEXT %d ROWS ONLY", off, page)
		rows, err := t.query(ctx, q)
		if err != nil {
			return fmt.Errorf("migrate: derby %s: %w", table, err)
		}
		for _, m := range rows {
			r := make(row, len(cols))
			for k, v := range m {
				r[strings.ToLower(k)] = derbyText(v)
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(rows) < page {
			return nil
		}
	}
}

// derbyText turns a JSON value of the derby answer into column text.
func derbyText(v any) sql.NullString {
	switch x := v.(type) {
	case nil:
		return sql.NullString{}
	case string:
		return sql.NullString{String: x, Valid: true}
	case json.Number:
		return sql.NullString{String: x.String(), Valid: true}
	case bool:
		return sql.NullString{String: strconv.FormatBool(x), Valid: true}
	}
	b, _ := json.Marshal(v)
	return sql.NullString{String: string(b), Valid: true}
}
