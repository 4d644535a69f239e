package nacosd.dubbo3;

/** The RPC interface the provider exports and the consumer references. */
public interface DemoService {
    /** Returns a greeting that names the provider's port. */
    String sayHello(String name);
}
