// Writes Hive 2.3's Kryo serialization of partition-filter expression trees, one case a line: "<name> <hex>".
// The trees are built the way Hive's type checker and partition pruner build them (ExprNodeGenericFuncDesc over
// partition columns and constants, the generic UDFs of Hive's FunctionRegistry) and serialized with
// SerializationUtilities.serializeExpressionToKryo, the bytes a Hive 2.3 client sends in get_partitions_by_expr
// and in drop_partitions_req's DropPartitionsExpr. tests/test_hive_expr.py compiles and runs it and checks that
// metastore.core.hive_expr decodes each case to the filter it means (or refuses it).
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.hive.common.type.HiveDecimal;
import org.apache.hadoop.hive.common.type.HiveVarchar;
import org.apache.hadoop.hive.ql.exec.SerializationUtilities;
import org.apache.hadoop.hive.ql.plan.ExprNodeColumnDesc;
import org.apache.hadoop.hive.ql.plan.ExprNodeConstantDesc;
import org.apache.hadoop.hive.ql.plan.ExprNodeDesc;
import org.apache.hadoop.hive.ql.plan.ExprNodeGenericFuncDesc;
import org.apache.hadoop.hive.ql.udf.UDFLike;
import org.apache.hadoop.hive.ql.udf.UDFToString;
import org.apache.hadoop.hive.ql.udf.UDFToInteger;
import org.apache.hadoop.hive.ql.udf.UDFToLong;
import org.apache.hadoop.hive.ql.udf.UDFToDouble;
import org.apache.hadoop.hive.ql.udf.generic.*;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfoFactory;

public class HiveExprCases {
  static final TypeInfo STR = TypeInfoFactory.stringTypeInfo;
  static final TypeInfo INT = TypeInfoFactory.intTypeInfo;
  static final TypeInfo BIGINT = TypeInfoFactory.longTypeInfo;
  static final TypeInfo SMALLINT = TypeInfoFactory.shortTypeInfo;
  static final TypeInfo TINYINT = TypeInfoFactory.byteTypeInfo;
  static final TypeInfo DATE = TypeInfoFactory.dateTypeInfo;
  static final TypeInfo DOUBLE = TypeInfoFactory.doubleTypeInfo;
  static final TypeInfo BOOL = TypeInfoFactory.booleanTypeInfo;
  static final TypeInfo DEC = TypeInfoFactory.getDecimalTypeInfo(10, 2);
  static final TypeInfo VC = TypeInfoFactory.getVarcharTypeInfo(10);
  static final TypeInfo CHR = TypeInfoFactory.getCharTypeInfo(5);
  static final TypeInfo TS = TypeInfoFactory.timestampTypeInfo;

  // Partition columns of the test table, as the pruner refers to them (table alias, partition column flag).
  static ExprNodeDesc ds() { return col("ds", STR); }
  static ExprNodeDesc hr() { return col("hr", INT); }
  static ExprNodeDesc region() { return col("region", STR); }

  static ExprNodeDesc col(String name, TypeInfo type) { return new ExprNodeColumnDesc(type, name, "t", true); }

  static ExprNodeDesc c(TypeInfo type, Object value) { return new ExprNodeConstantDesc(type, value); }

  static ExprNodeDesc s(String v) { return c(STR, v); }

  static ExprNodeDesc i(int v) { return c(INT, v); }

  static ExprNodeGenericFuncDesc fn(GenericUDF udf, ExprNodeDesc... args) {
    try {
      return ExprNodeGenericFuncDesc.newInstance(udf, new ArrayList<>(Arrays.asList(args)));
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  static ExprNodeGenericFuncDesc eq(ExprNodeDesc a, ExprNodeDesc b) { return fn(new GenericUDFOPEqual(), a, b); }

  static ExprNodeGenericFuncDesc and(ExprNodeDesc... a) { return fn(new GenericUDFOPAnd(), a); }

  static ExprNodeGenericFuncDesc or(ExprNodeDesc... a) { return fn(new GenericUDFOPOr(), a); }

  static ExprNodeGenericFuncDesc not(ExprNodeDesc a) { return fn(new GenericUDFOPNot(), a); }

  static ExprNodeGenericFuncDesc like(ExprNodeDesc a, String pattern) {
    return fn(new GenericUDFBridge("like", true, UDFLike.class.getName()), a, s(pattern));
  }

  static ExprNodeGenericFuncDesc in(ExprNodeDesc... a) { return fn(new GenericUDFIn(), a); }

  static ExprNodeGenericFuncDesc between(boolean invert, ExprNodeDesc k, ExprNodeDesc lo, ExprNodeDesc hi) {
    return fn(new GenericUDFBetween(), c(BOOL, invert), k, lo, hi);
  }

  static ExprNodeDesc bridge(String name, Class<?> cls, ExprNodeDesc a) {
    return fn(new GenericUDFBridge(name, false, cls.getName()), a);
  }

  static java.sql.Date dateIn(String zone, String day) {
    java.util.TimeZone saved = java.util.TimeZone.getDefault();
    java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone(zone));
    try {
      return java.sql.Date.valueOf(day);
    } finally {
      java.util.TimeZone.setDefault(saved);
    }
  }

  static ExprNodeGenericFuncDesc notChain(int depth) {
    ExprNodeGenericFuncDesc e = eq(ds(), s("a"));
    for (int k = 0; k < depth; k++) {
      e = not(e);
    }
    return e;
  }

  static Map<String, ExprNodeGenericFuncDesc> cases() {
    Map<String, ExprNodeGenericFuncDesc> m = new LinkedHashMap<>();
    m.put("eq_string", eq(ds(), s("2024-01-01")));
    m.put("eq_int", eq(hr(), i(3)));
    m.put("eq_reversed", eq(i(3), hr()));
    m.put("ne_string", fn(new GenericUDFOPNotEqual(), ds(), s("x")));
    m.put("lt_int", fn(new GenericUDFOPLessThan(), hr(), i(10)));
    m.put("le_int", fn(new GenericUDFOPEqualOrLessThan(), hr(), i(10)));
    m.put("gt_string", fn(new GenericUDFOPGreaterThan(), ds(), s("2024")));
    m.put("ge_int", fn(new GenericUDFOPEqualOrGreaterThan(), hr(), i(-5)));
    m.put("gt_reversed", fn(new GenericUDFOPGreaterThan(), i(7), hr()));
    m.put("eq_bigint", eq(col("big", BIGINT), c(BIGINT, 9000000000L)));
    m.put("eq_smallint", eq(col("sm", SMALLINT), c(SMALLINT, (short) 12)));
    m.put("eq_tinyint", eq(col("ti", TINYINT), c(TINYINT, (byte) -3)));
    m.put("bigint_col_int_const", fn(new GenericUDFOPLessThan(), col("big", BIGINT), i(100)));
    m.put("eq_date", eq(col("d", DATE), c(DATE, java.sql.Date.valueOf("2024-03-05"))));
    m.put("ge_date", fn(new GenericUDFOPEqualOrGreaterThan(), col("d", DATE), c(DATE, java.sql.Date.valueOf("1999-12-31"))));
    // A java.sql.Date constant is the client's local midnight: the same day from clients in several zones.
    m.put("date_tokyo", eq(col("d", DATE), c(DATE, dateIn("Asia/Tokyo", "2024-03-05"))));
    m.put("date_kolkata", eq(col("d", DATE), c(DATE, dateIn("Asia/Kolkata", "2024-03-05"))));
    m.put("date_los_angeles", eq(col("d", DATE), c(DATE, dateIn("America/Los_Angeles", "2024-03-05"))));
    m.put("date_auckland_winter", eq(col("d", DATE), c(DATE, dateIn("Pacific/Auckland", "2024-07-01"))));
    m.put("refuse_date_kiritimati", eq(col("d", DATE), c(DATE, dateIn("Pacific/Kiritimati", "2024-03-05"))));
    m.put("date_1583", eq(col("d", DATE), c(DATE, dateIn("UTC", "1583-01-01"))));
    m.put("date_9999", eq(col("d", DATE), c(DATE, dateIn("UTC", "9999-12-31"))));
    m.put("date_col_string_const", eq(col("d", DATE), s("2024-03-05")));
    m.put("refuse_date_col_odd_string", eq(col("d", DATE), s("2024-3-5")));
    m.put("not_le_date", not(fn(new GenericUDFOPEqualOrLessThan(), col("d", DATE), c(DATE, java.sql.Date.valueOf("2024-01-01")))));
    m.put("eq_varchar", eq(col("vc", VC), c(VC, new HiveVarchar("abc", 10))));
    m.put("eq_unicode", eq(ds(), s("d\u00e9j\u00e0 \u4e2d\u6587 \ud83d\ude00")));
    m.put("eq_empty", eq(ds(), s("")));
    m.put("eq_one_char", eq(ds(), s("a")));
    m.put("eq_long_string", eq(ds(), s(String.join("", java.util.Collections.nCopies(40, "abcdefghij")))));
    m.put("and2", and(eq(ds(), s("a")), eq(hr(), i(1))));
    m.put("and3", and(and(eq(ds(), s("a")), eq(hr(), i(1))), eq(region(), s("eu"))));
    m.put("or2", or(eq(ds(), s("a")), eq(ds(), s("b"))));
    m.put("not_eq", not(eq(ds(), s("a"))));
    m.put("nested", or(and(eq(ds(), s("a")), not(fn(new GenericUDFOPLessThan(), hr(), i(5)))),
        and(eq(ds(), s("b")), fn(new GenericUDFOPGreaterThan(), hr(), i(20)))));
    m.put("shared_string", and(eq(ds(), s("same")), eq(region(), s("same"))));
    m.put("in_string", in(ds(), s("a"), s("b"), s("c")));
    m.put("in_int", in(hr(), i(1), i(2), i(3)));
    m.put("not_in", not(in(ds(), s("a"), s("b"))));
    m.put("between_int", between(false, hr(), i(1), i(5)));
    m.put("not_between_string", between(true, ds(), s("2024-01-01"), s("2024-12-31")));
    m.put("like_prefix", like(ds(), "2024-%"));
    m.put("like_one", like(ds(), "2024-0_-01"));
    m.put("like_meta", like(ds(), "a.b*c%"));
    m.put("like_escape", like(ds(), "100\\%"));
    m.put("is_null", fn(new GenericUDFOPNull(), ds()));
    m.put("is_not_null", fn(new GenericUDFOPNotNull(), ds()));
    m.put("cast_string_identity", eq(bridge("string", UDFToString.class, ds()), s("a")));
    m.put("cast_int_widen", eq(bridge("bigint", UDFToLong.class, hr()), c(BIGINT, 4L)));
    // ALTER TABLE ... DROP PARTITION (ds='2024-01-01', hr<12, region='__HIVE_DEFAULT_PARTITION__'), as
    // DDLSemanticAnalyzer builds it: columns without a table alias, binary ANDs, isnull for the default name.
    m.put("drop_spec", and(and(eq(new ExprNodeColumnDesc(STR, "ds", null, true), s("2024-01-01")),
        fn(new GenericUDFOPLessThan(), new ExprNodeColumnDesc(INT, "hr", null, true), i(12))),
        fn(new GenericUDFOPNull(), new ExprNodeColumnDesc(STR, "region", null, true))));
    m.put("drop_default_int", fn(new GenericUDFOPNotNull(), new ExprNodeColumnDesc(INT, "hr", null, true)));
    // Refused: the reader cannot give them the meaning Hive gives them.
    m.put("refuse_cast_int_to_string", eq(bridge("string", UDFToString.class, hr()), s("3")));
    m.put("refuse_cast_to_double", eq(bridge("double", UDFToDouble.class, ds()), c(DOUBLE, 1.5)));
    m.put("refuse_cast_narrow", eq(bridge("int", UDFToInteger.class, col("big", BIGINT)), i(4)));
    m.put("refuse_upper", eq(fn(new GenericUDFUpper(), ds()), s("A")));
    m.put("refuse_date_honolulu", eq(col("d", DATE), c(DATE, dateIn("Pacific/Honolulu", "2024-03-05"))));
    m.put("refuse_date_auckland_summer", eq(col("d", DATE), c(DATE, dateIn("Pacific/Auckland", "2024-01-15"))));
    m.put("refuse_date_julian", eq(col("d", DATE), c(DATE, dateIn("UTC", "1500-06-01"))));
    m.put("refuse_decimal", eq(col("dec", DEC), c(DEC, HiveDecimal.create(new BigDecimal("1.50")))));
    m.put("refuse_double", eq(col("dbl", DOUBLE), c(DOUBLE, 2.0)));
    m.put("refuse_char", eq(col("ch", CHR), c(CHR, new org.apache.hadoop.hive.common.type.HiveChar("ab", 5))));
    m.put("refuse_timestamp", eq(col("ts", TS), c(TS, java.sql.Timestamp.valueOf("2024-01-01 10:00:00"))));
    m.put("refuse_string_col_int_const", eq(ds(), i(5)));
    m.put("refuse_int_col_string_const", eq(hr(), s("5")));
    m.put("refuse_col_col", eq(ds(), region()));
    m.put("refuse_const_const", eq(s("a"), s("a")));
    m.put("refuse_null_const", eq(ds(), c(STR, null)));
    m.put("refuse_like_column_pattern", fn(new GenericUDFBridge("like", true, UDFLike.class.getName()), ds(), region()));
    m.put("refuse_in_column", in(ds(), region()));
    m.put("not_deep", notChain(40));
    m.put("refuse_too_deep", notChain(150));
    m.put("refuse_concat", eq(fn(new GenericUDFConcat(), ds(), s("x")), s("ax")));
    return m;
  }

  public static void main(String[] args) {
    StringBuilder out = new StringBuilder();
    for (Map.Entry<String, ExprNodeGenericFuncDesc> e : cases().entrySet()) {
      byte[] bytes = SerializationUtilities.serializeExpressionToKryo(e.getValue());
      // Round trip through Hive's own reader: the bytes are what Hive's server would read.
      ExprNodeGenericFuncDesc back = SerializationUtilities.deserializeExpressionFromKryo(bytes);
      if (!back.getExprString().equals(e.getValue().getExprString())) {
        throw new IllegalStateException("round trip changed " + e.getKey());
      }
      StringBuilder hex = new StringBuilder();
      for (byte b : bytes) {
        hex.append(String.format("%02x", b & 0xff));
      }
      out.append(e.getKey()).append(' ').append(hex).append(' ').append(e.getValue().getExprString().replace(' ', '_')).append('\n');
    }
    System.out.print(out);
  }
}
