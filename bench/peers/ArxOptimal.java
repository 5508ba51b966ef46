// Side-by-side driver: runs the optimal-search requests of bench/peers/arx_cases.txt with ARX
// on an Adult CSV and prints one tab-separated line per request.
//
// Usage: java -cp <classpath from arx_setup.sh> ArxOptimal DATA.csv HIERARCHY_DIR CASES REPEATS
// Columns: case, rows, parse_s (Data.create + hierarchies, fastest call), first_s (first anonymize call of
// the case, JIT warm-up included), best_s (fastest of REPEATS later calls; the first when
// REPEATS is 0), best_cpu_s
// (process CPU of that call), score (ARX's highest score of the optimum), transformation,
// parse_cpu_s (process CPU of the fastest parse).
import java.io.BufferedReader;
import java.io.FileReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.criteria.BasicBLikeness;
import org.deidentifier.arx.criteria.DDisclosurePrivacy;
import org.deidentifier.arx.criteria.DistinctLDiversity;
import org.deidentifier.arx.criteria.EnhancedBLikeness;
import org.deidentifier.arx.criteria.EntropyLDiversity;
import org.deidentifier.arx.criteria.EqualDistanceTCloseness;
import org.deidentifier.arx.criteria.HierarchicalDistanceTCloseness;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.criteria.OrderedDistanceTCloseness;
import org.deidentifier.arx.criteria.RecursiveCLDiversity;
import org.deidentifier.arx.metric.Metric;

public class ArxOptimal {

    static final String SENSITIVE = "occupation";
    static final String[] QIS9 = {"sex", "age", "race", "marital-status", "education",
        "native-country", "workclass", "occupation", "salary-class"};

    static double cpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory
            .getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
    }

    static Data load(String csv, String dir, int nQis, boolean sensitive) throws Exception {
        Data data = Data.create(csv, StandardCharsets.UTF_8, ';');
        for (int j = 0; j < QIS9.length; j++) {
            String c = QIS9[j];
            if (c.equals(SENSITIVE) && nQis == 8) {
                data.getDefinition().setAttributeType(c, sensitive
                    ? AttributeType.SENSITIVE_ATTRIBUTE : AttributeType.INSENSITIVE_ATTRIBUTE);
            } else {
                data.getDefinition().setAttributeType(c, Hierarchy.create(
                    dir + "/adult_hierarchy_" + c + ".csv", StandardCharsets.UTF_8, ';'));
            }
        }
        return data;
    }

    static ARXConfiguration config(double supp, String metric, String models, String dir)
            throws Exception {
        Metric<?> m;
        switch (metric) {
            case "discernibility": m = Metric.createDiscernabilityMetric(true); break;
            case "entropy": m = Metric.createPrecomputedEntropyMetric(0.1d, true); break;
            case "entropy-nonmonotonic": m = Metric.createPrecomputedEntropyMetric(0.1d, false); break;
            case "loss": m = Metric.createLossMetric(); break;
            default: throw new IllegalArgumentException(metric);
        }
        ARXConfiguration config = ARXConfiguration.create(supp, m);
        for (String t : models.split(",")) {
            if (t.startsWith("k")) {
                config.addPrivacyModel(new KAnonymity(Integer.parseInt(t.substring(1))));
            } else if (t.startsWith("dl")) {
                config.addPrivacyModel(new DistinctLDiversity(SENSITIVE, Integer.parseInt(t.substring(2))));
            } else if (t.startsWith("el")) {
                config.addPrivacyModel(new EntropyLDiversity(SENSITIVE, Double.parseDouble(t.substring(2)),
                    EntropyLDiversity.EntropyEstimator.SHANNON));
            } else if (t.startsWith("rc")) {
                String[] cl = t.substring(2).split("/");
                config.addPrivacyModel(new RecursiveCLDiversity(SENSITIVE, Double.parseDouble(cl[0]),
                    Integer.parseInt(cl[1])));
            } else if (t.startsWith("teq")) {
                config.addPrivacyModel(new EqualDistanceTCloseness(SENSITIVE, Double.parseDouble(t.substring(3))));
            } else if (t.startsWith("tord")) {
                config.addPrivacyModel(new OrderedDistanceTCloseness(SENSITIVE, Double.parseDouble(t.substring(4))));
            } else if (t.startsWith("thier")) {
                config.addPrivacyModel(new HierarchicalDistanceTCloseness(SENSITIVE,
                    Double.parseDouble(t.substring(5)), Hierarchy.create(dir + "/adult_hierarchy_"
                    + SENSITIVE + ".csv", StandardCharsets.UTF_8, ';')));
            } else if (t.startsWith("bb")) {
                config.addPrivacyModel(new BasicBLikeness(SENSITIVE, Double.parseDouble(t.substring(2))));
            } else if (t.startsWith("be")) {
                config.addPrivacyModel(new EnhancedBLikeness(SENSITIVE, Double.parseDouble(t.substring(2))));
            } else if (t.startsWith("dd")) {
                // ARX takes |log2(q / p)| < delta; the case's delta is on ln, as ours
                config.addPrivacyModel(new DDisclosurePrivacy(SENSITIVE,
                    Double.parseDouble(t.substring(2)) / Math.log(2)));
            } else {
                throw new IllegalArgumentException(t);
            }
        }
        return config;
    }

    public static void main(String[] args) throws Exception {
        String csv = args[0], dir = args[1], cases = args[2];
        int repeats = Integer.parseInt(args[3]);
        List<String[]> todo = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new FileReader(cases))) {
            String line;
            while ((line = in.readLine()) != null) {
                line = line.trim();
                if (!line.isEmpty() && !line.startsWith("#")) todo.add(line.split("\\s+"));
            }
        }
        System.out.println("case\trows\tparse_s\tfirst_s\tbest_s\tbest_cpu_s\tscore\ttransformation\tparse_cpu_s");
        for (String[] c : todo) {
            // name supp metric qis models expected_score expected_levels
            String name = c[0], metric = c[2], models = c[4];
            double supp = Double.parseDouble(c[1]);
            int nQis = Integer.parseInt(c[3]);
            boolean sensitive = !models.matches("^(k\\d+,?)+$");
            double parse = Double.MAX_VALUE, parseCpu = 0, first = 0, best = Double.MAX_VALUE, bestCpu = 0;
            String score = "", levels = "";
            int rows = 0;
            for (int r = 0; r <= repeats; r++) {
                long t0 = System.nanoTime();
                double p0 = cpu();
                Data data = load(csv, dir, nQis, sensitive);
                ARXConfiguration config = config(supp, metric, models, dir);
                data.getHandle();  // forces the rows to be read
                long t1 = System.nanoTime();
                double c0 = cpu();
                ARXResult result = new ARXAnonymizer().anonymize(data, config);
                double c1 = cpu();
                long t2 = System.nanoTime();
                rows = data.getHandle().getNumRows();
                double search = (t2 - t1) / 1e9;
                if ((t1 - t0) / 1e9 < parse) {
                    parse = (t1 - t0) / 1e9;
                    parseCpu = c0 - p0;
                }
                if (r == 0) {
                    first = search;
                }
                if ((r > 0 || repeats == 0) && search < best) {
                    best = search;
                    bestCpu = c1 - c0;
                }
                if (result.getGlobalOptimum() == null) {
                    score = "infeasible";
                    levels = "-";
                } else {
                    score = result.getGlobalOptimum().getHighestScore().toString();
                    levels = Arrays.toString(result.getGlobalOptimum().getTransformation()).replace(" ", "");
                }
            }

            System.out.printf("%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\t%.3f%n", name, rows, parse, first,
                best, bestCpu, score, levels, parseCpu);
            System.out.flush();
        }
    }
}
