package io.watchfanout.kube.codec;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Marks a test class or method that compares the codec or the node with kube-apiserver's serializer fixtures
 * ({@link KubeFixtures}): it runs where the fixtures lie beside the repository and is reported as
 * skipped, with the directories searched, where they do not (a clone on its own). Evaluated before
 * a parameterized test's arguments are read, so a fixture list is never asked for in vain.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresKubeFixtures.Condition.class)
public @interface RequiresKubeFixtures {
    /** Enables the marked tests only when {@link KubeFixtures#find()} finds the fixtures. */
    final class Condition implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return KubeFixtures.find()
                    .map(dir -> ConditionEvaluationResult.enabled("kube-apiserver's serializer fixtures in " + dir))
                    .orElseGet(() -> ConditionEvaluationResult.disabled(KubeFixtures.absence()));
        }
    }
}
