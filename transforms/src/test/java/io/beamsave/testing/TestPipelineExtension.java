package io.beamsave.testing;

import java.lang.reflect.Method;
import java.util.List;
import org.apache.beam.sdk.testing.TestPipeline;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.runner.Description;
import org.junit.runners.model.Statement;

/**
 * Beam's {@link TestPipeline} in JUnit 5 tests: each {@code TestPipeline} parameter of a test is
 * a new pipeline, and the test runs inside the pipeline's own JUnit 4 rule, as Beam's tests do.
 * The rule fails a test that built a pipeline and never ran it, so a {@code PAssert} that never
 * ran cannot pass for one that held.
 */
public final class TestPipelineExtension implements ParameterResolver, InvocationInterceptor {
  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == TestPipeline.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return TestPipeline.create();
  }

  @Override
  public void interceptTestMethod(Invocation<Void> invocation,
      ReflectiveInvocationContext<Method> call, ExtensionContext context) throws Throwable {
    List<TestPipeline> pipelines = call.getArguments().stream()
        .filter(TestPipeline.class::isInstance).map(TestPipeline.class::cast).toList();
    Statement test = new Statement() {
      @Override
      public void evaluate() throws Throwable {
        invocation.proceed();
      }
    };
    Description description = Description.createTestDescription(
        context.getRequiredTestClass(), context.getRequiredTestMethod().getName());
    for (TestPipeline p : pipelines) {
      test = p.apply(test, description);
    }
    test.evaluate();
  }
}
